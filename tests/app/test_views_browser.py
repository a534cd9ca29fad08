"""Browser-only effects of the Run, Compare and Geometry pages, in headless Chromium
against the real stack (the ``stack`` fixture of test_dashboard_e2e.py)."""

from __future__ import annotations

import numpy as np
import pytest
from test_dashboard_e2e import CHROMIUM, CHROMIUM_ARGS, _settle, stack  # noqa: F401

from db.store import RunStore

pytestmark = pytest.mark.e2e
DIM = 8

#: A chart's content wider than its box is cut off (bug 5): compare the Vega view's
#: width with the width the page gives the chart.
_OVERFLOW_JS = """
els => els.map(el => {
  const view = el.querySelector('canvas, svg');
  const box = el.getBoundingClientRect();
  const drawn = view ? view.getBoundingClientRect() : box;
  const parent = el.parentElement.getBoundingClientRect();
  return {left: drawn.left, right: drawn.right, limit: box.right, parent: parent.right};
})
"""


def _record(store: RunStore, name: str, scale: float) -> str:
    rng = np.random.default_rng(int(scale * 10))
    run_id = store.create_run({}, name, kind="analysis", status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        tracker.track_eval({"recall@1": 0.5}, 0)
        points = (rng.normal(size=(200, DIM)) * scale).astype(np.float32)
        tracker.track_snapshot(points, np.arange(200) % 10, 0)
    store.set_status(run_id, "finished")
    return run_id


def test_geometry_matrices_fit_their_columns_and_do_not_overlap(stack, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    store = RunStore(tmp_path / "home")
    first = _record(store, "narrow norms", 0.3)
    _record(store, "wide norms", 3.0)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{stack}/geometry?run_id={first}")
        page.get_by_role("heading", name="Embedding geometry").wait_for(timeout=60_000)
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        charts.nth(3).wait_for(timeout=60_000)
        _settle(page)
        single = charts.evaluate_all(_OVERFLOW_JS)
        matrix = single[2]  # histogram, PCA, scatter matrix, angles
        assert matrix["right"] <= matrix["parent"] + 1, matrix  # all 8 columns shown
        page.get_by_text("Two runs side by side").click()
        _settle(page)
        charts.nth(7).wait_for(timeout=60_000)
        _settle(page)
        pair = charts.evaluate_all(_OVERFLOW_JS)
        left, right = pair[2], pair[6]
        assert left["right"] <= right["left"], (left, right)  # no overlap
        assert right["right"] <= right["parent"] + 1, right
        browser.close()
