"""``run_picker.pick_runs``: the one run picker of the Run, Explorer and Geometry pages, with the
same defaults, the same warning for a link to a missing run and the same link."""

from __future__ import annotations

import pandas as pd
import pytest
from app_fixtures import open_page, texts

from app.ui import default_runs

PICKERS = {
    "views/run.py": "run.select",
    "views/explorer.py": "explorer.run",
    "views/geometry.py": "geometry.run0",
}
PAGES = pytest.mark.parametrize("page", list(PICKERS))
MISSING = "No run with id"


def _link_warnings(app) -> list[str]:
    """The page's warnings about the link (the Run page may also warn of findings)."""
    return [w for w in texts(app.warning) if w.startswith(MISSING)]


def _frame(*rows: tuple[str, str, str]) -> pd.DataFrame:
    """Runs newest first, as ``data.runs`` lists them: (run_id, kind, status)."""
    return pd.DataFrame(rows, columns=["run_id", "kind", "status"])


def test_defaults_put_the_link_first_then_the_newest_runs_with_results() -> None:
    frame = _frame(
        ("analysis", "analysis", "finished"),
        ("broken", "train", "failed"),
        ("new", "train", "running"),
        ("old", "train", "finished"),
    )
    assert default_runs(frame, None, 1) == ["new"]
    assert default_runs(frame, None, 2) == ["new", "old"]
    assert default_runs(frame, "broken", 2) == ["broken", "new"]
    assert default_runs(frame, "missing", 1) == ["new"]  # an unknown link picks nothing
    assert default_runs(frame, None, 9) == ["new", "old", "analysis", "broken"]
    assert default_runs(_frame(), "x", 2) == []


@PAGES
def test_without_a_link_every_page_opens_on_the_newest_run_with_results(filled, page) -> None:
    # the store's newest runs are an analysis and a failed run: neither has results
    app = open_page(page)
    assert not app.exception and not _link_warnings(app)
    assert app.selectbox(key=PICKERS[page]).value == filled.plain
    assert app.query_params["run_id"] == filled.plain  # the link names what is shown


@PAGES
def test_a_link_picks_its_run(filled, page) -> None:
    app = open_page(page, {"run_id": filled.sec})
    assert not app.exception and not _link_warnings(app)
    assert app.selectbox(key=PICKERS[page]).value == filled.sec


@PAGES
def test_a_link_to_a_missing_run_says_so_and_keeps_the_link(filled, page) -> None:
    app = open_page(page, {"run_id": "nope"})
    assert not app.exception
    [warning] = _link_warnings(app)
    assert warning.startswith(f"{MISSING} `nope`: it was deleted or the link is mistyped")
    assert app.selectbox(key=PICKERS[page]).value == filled.plain
    assert app.query_params["run_id"] == "nope"


def test_picking_another_run_names_it_in_the_link_without_the_old_runs_step(filled) -> None:
    app = open_page("views/explorer.py", {"run_id": filled.sec, "step": "30"})
    app.selectbox(key="explorer.run").set_value(filled.plain).run()
    assert not app.exception
    assert app.query_params["run_id"] == filled.plain
    assert "step" not in app.query_params


def test_side_by_side_geometry_starts_on_two_runs(filled) -> None:
    app = open_page("views/geometry.py", {"run_id": filled.sec})
    app.toggle(key="geometry.pair").set_value(True).run()
    assert not app.exception
    picked = [app.selectbox(key=f"geometry.run{slot}").value for slot in (0, 1)]
    assert picked == [filled.sec, filled.plain]
