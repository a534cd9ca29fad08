"""What the Run and Compare pages send on their first paint (``ui.first_paint``), in
the order that brings the first chart soonest, without changing what they show."""

from __future__ import annotations

import json

from app_fixtures import first_paint, live_payloads


def _charted(app) -> list[dict]:
    return [payload for payload in live_payloads(app) if payload["charts"]]


def test_the_run_page_shows_its_tiles_charts_and_no_empty_chart_element(filled):
    app = first_paint("views/run.py", {"run_id": filled.sec})
    assert not app.exception and not app.error
    # the element sent under the title to load the chart code early is gone
    assert len(live_payloads(app)) == len(_charted(app)) == 1
    assert any("spherescope-tiles" in str(m.value) for m in app.markdown)  # read after


def test_compare_sends_only_the_columns_its_charts_draw(filled):
    app = first_paint(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    assert not app.exception and not app.error
    (payload,) = live_payloads(app)
    (chart,) = payload["charts"]
    rows = json.loads(chart["rows"])
    assert sorted(rows) == ["max", "min", "run", "step", "value"]
    assert len(set(rows["run"])) == 2  # a line per run


def test_pages_that_stop_before_their_charts_leave_no_empty_chart_element(home):
    # an empty store: both pages say what to do and stop
    for page in ("views/run.py", "views/compare.py"):
        app = first_paint(page)
        assert not app.exception
        assert app.info and not live_payloads(app)
