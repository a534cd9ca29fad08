"""Browser-only effects of the Run, Compare and Geometry pages, in headless Chromium
against the real stack (the ``shared_stack`` fixture of conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest
from dashboard_server import spherescope_up
from test_dashboard_e2e import _settle

from db.store import RunStore

pytestmark = pytest.mark.e2e
DIM = 8

#: Where each scatter matrix's canvas lies, and the width the page gives its element.
_MATRIX_BOXES_JS = """
els => els.map(el => {
  const drawn = el.querySelector('canvas').getBoundingClientRect();
  const parent = el.parentElement.getBoundingClientRect();
  return {left: drawn.left, right: drawn.right, parent: parent.right,
          rows: Number(el.dataset.drawnRows)};
})
"""
#: The page position, canvas pixel colour and tooltip target of point ``index`` (or a
#: vertex) in cell (row, column) of the first matrix.
_POINT_JS = """([row, column, index, vertex]) => {
  const matrix = document.querySelector('.spherescope-matrix').matrix;
  const [x, y] = matrix.pixel(row, column, index, vertex);
  const box = matrix.canvas.getBoundingClientRect();
  const ratio = window.devicePixelRatio || 1;
  const rgba = matrix.canvas.getContext('2d')
    .getImageData(Math.round(x * ratio), Math.round(y * ratio), 1, 1).data;
  const ink = getComputedStyle(matrix.root).color.match(/[0-9]+/g).slice(0, 3).map(Number);
  return {x: box.left + x, y: box.top + y, rgba: Array.from(rgba), ink};
}"""


def _record(store: RunStore, name: str, scale: float, config: dict | None = None) -> str:
    rng = np.random.default_rng(int(scale * 10))
    run_id = store.create_run(config or {}, name, kind="analysis", status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        tracker.track_eval({"recall@1": 0.5}, 0)
        points = (rng.normal(size=(200, DIM)) * scale).astype(np.float32)
        tracker.track_snapshot(points, np.arange(200) % 10, 0)
    store.set_status(run_id, "finished")
    return run_id


def _matrices(page, count: int) -> list[dict]:
    """The page's scatter matrices once ``count`` of them have drawn every row, measured
    in the same evaluation as that check (a rerun may replace an element between a wait
    and a later measurement). Matrices of a rerun's stale elements are left out: until
    the rerun ends, the full-width grid it replaces is still on the page."""
    handle = page.wait_for_function(
        "n => { const m = [...document.querySelectorAll('.spherescope-matrix')]"
        ".filter(e => !e.closest('[data-stale=\"true\"]'));"
        f" if (m.length !== n || !m.every(e => e.dataset.drawnRows === '{DIM}')) return null;"
        f" const boxes = ({_MATRIX_BOXES_JS.strip()})(m);"
        " return boxes.every(b => b.right > b.left) ? boxes : null; }",
        arg=count,
        timeout=60_000,
    )
    return handle.json_value()


def test_geometry_matrices_fit_their_columns_and_do_not_overlap(tmp_path, browser):
    """The 8th column was cut off; side by side the grids clipped and overlapped."""
    # a stack of its own: side by side, the second run is the page's default pick, which
    # the shared store's other training runs would take
    store = RunStore(tmp_path / "home")
    first = _record(store, "narrow norms", 0.3)
    _record(store, "wide norms", 3.0)
    with spherescope_up(tmp_path / "home", "geometry-stack.log") as stack:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{stack}/geometry?run_id={first}")
        page.get_by_role("heading", name="Embedding geometry").wait_for(timeout=60_000)
        (single,) = _matrices(page, 1)
        assert single["right"] <= single["parent"] + 1, single  # all 8 columns shown
        assert single["right"] - single["left"] > 600, single  # and the width used
        page.get_by_text("Two runs side by side").click()
        _settle(page)
        left, right = _matrices(page, 2)
        assert left["right"] <= right["left"], (left, right)  # no overlap
        assert right["right"] <= right["parent"] + 1, right


def test_geometry_matrix_draws_points_vertices_and_tells_them_on_hover(
    shared_stack, stack_home, browser
):
    """The canvas matrix draws each point in its class colour and the fixed head's
    vertices as "×" in the theme's text colour; hovering tells the class and
    coordinates; a legend click brings one class forward."""
    store = RunStore(stack_home)
    config = {"objective": {"kind": "head", "name": "orthoplex"}}
    run_id = _record(store, "orthoplex", 1.0, config)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    page.goto(f"{shared_stack}/geometry?run_id={run_id}")
    page.get_by_text("fixed orthoplex vertices").wait_for(timeout=60_000)
    _matrices(page, 1)
    page.locator(".spherescope-matrix canvas").scroll_into_view_if_needed()
    dot = page.evaluate(_POINT_JS, [1, 0, 0, False])
    assert dot["rgba"][3] > 0 and dot["rgba"][:3] != [255, 255, 255], dot  # drawn
    page.mouse.move(dot["x"], dot["y"])
    tooltip = page.locator(".spherescope-matrix-tooltip")
    tooltip.wait_for(state="visible")
    assert tooltip.inner_text().startswith("class 0"), tooltip.inner_text()  # point 0
    vertex = page.evaluate(_POINT_JS, [2, 1, 0, True])
    # a "×" in the theme's text colour
    assert vertex["rgba"][:3] == vertex["ink"] and vertex["rgba"][3] > 200, vertex
    page.mouse.move(vertex["x"], vertex["y"])
    page.wait_for_function(
        "() => document.querySelector('.spherescope-matrix-tooltip')"
        ".textContent.startsWith('vertex')"
    )
    page.locator('.spherescope-matrix-class[data-class="3"]').click()
    assert page.locator(".spherescope-matrix-class.faded").count() == 9
    faded = page.evaluate(_POINT_JS, [1, 0, 0, False])  # class 0, now behind class 3
    assert faded["rgba"][3] < dot["rgba"][3] or faded["rgba"][:3] != dot["rgba"][:3]
    page.locator('[data-testid="stVegaLiteChart"]').last.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)  # the page's Vega charts drawn
    assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 1
    assert not [w for w in warnings if "WARN" in w], warnings  # Vega's warnings
