"""The Runs grid at 1280 px shows a lab's long run names whole: the grid (a canvas)
draws the name, and it must end before the next column starts, while the key metrics
stay in view beside it. A "medium" name column cut such a name after ~25 characters."""

from __future__ import annotations

import pytest
from dashboard_server import ARTIFACTS, dashboard
from test_dashboard_e2e import _settle
from test_runs_browser import _finished, _grid_names

from db.store import RunStore

pytestmark = pytest.mark.e2e
LONG = "sec-w0.5-lr3e-4-seed2-resnet50-cub200-fold3-warmup500"
#: Records what the grid draws: each string, where it starts and how wide it is (page px).
RECORD_TEXT = """
window.drawnText = [];
const fillText = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
  const m = this.getTransform();
  window.drawnText.push({text: String(text), x: x * m.a + m.e,
                         width: this.measureText(String(text)).width * m.a});
  return fillText.call(this, text, x, y, ...rest);
};
"""


def test_a_long_run_name_is_drawn_whole_at_1280_px(tmp_path, browser) -> None:
    from app import data

    home = tmp_path / "home"
    store = RunStore(home)
    _finished(store, "short", 0.5)
    _finished(store, LONG, 0.6)
    ARTIFACTS.mkdir(exist_ok=True)
    with dashboard("main.py", {"SPHERESCOPE_HOME": str(home)}) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.add_init_script(RECORD_TEXT)
        try:
            page.goto(base + "/")
            names = _grid_names(page)
            _settle(page)
            page.wait_for_timeout(1000)  # the grid's next animation frame
            drawn = page.evaluate("window.drawnText")
            page.screenshot(path=str(ARTIFACTS / "runs-long-name.png"))
        finally:
            page.close()
    labels = data.key_column_labels()
    assert names[:4] == ["name", "R@1", labels["train:loss/total"], labels["train:norm/var"]]
    # the grid drops what cannot show at all: a cut name is drawn as a shorter prefix
    name = next(d for d in drawn if d["text"].startswith(LONG[:20]))
    assert name["text"] == LONG
    next_header = next(d for d in drawn if d["text"] == "R@1")  # the column after the name
    assert name["x"] + name["width"] < next_header["x"] - 8  # the cell's padding
