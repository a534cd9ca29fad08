"""A long run whose loss is 0 on most steps and spikes on a few, in headless Chromium
against the shared stack: the Run page's and Compare's loss charts draw the spikes as
a min–max band (a Vega area mark) whose top reaches them, not a flat 0 line."""

from __future__ import annotations

import pytest
from app_fixtures import sparse_loss_run
from dashboard_server import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

from db.store import RunStore

pytestmark = pytest.mark.e2e

CHARTS = ".spherescope-live-chart"
#: Per chart (in page order): the number of drawn items of each mark type in its Vega
#: scenegraph, its y domain and the largest ``max`` of its rows (null: no such field).
_MARKS_JS = f"""() => Array.from(document.querySelectorAll('{CHARTS}'), cell => {{
  const counts = {{}};
  const walk = node => {{
    if (!node) return;
    if (node.marktype) {{
      counts[node.marktype] = (counts[node.marktype] || 0) + (node.items || []).length;
    }}
    for (const child of node.items || []) walk(child);
  }};
  const view = cell.vegaView;
  walk(view.scenegraph().root);
  const tops = view.data('rows').map(row => row.max).filter(v => typeof v === 'number');
  return {{marks: counts, y: view.scale('y').domain().map(Number),
           top: tops.length ? Math.max(...tops) : null}};
}})"""


def _check_loss_band(page) -> None:
    """The loss chart (the one whose rows reach the last spikes, ~1.5) draws an area
    behind its line and its y axis reaches the spikes."""
    charts = page.evaluate(_MARKS_JS)
    loss = [c for c in charts if c["top"] is not None and c["top"] >= 1.4]
    assert loss, charts
    for chart in loss:
        assert chart["marks"].get("area", 0) >= 1, chart  # the band
        assert chart["marks"].get("line", 0) >= 1, chart
        assert chart["y"][1] >= 1.4, chart  # the axis reaches the spikes


def test_sparse_loss_spikes_show_as_a_band(shared_stack, stack_home):
    from playwright.sync_api import sync_playwright

    run_id = sparse_loss_run(RunStore(stack_home))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1400})
        page.goto(f"{shared_stack}/run?run_id={run_id}")
        page.locator(f"{CHARTS} canvas").first.wait_for(timeout=90_000)
        page.wait_for_timeout(1000)
        _check_loss_band(page)
        page.screenshot(path=ARTIFACTS / "run-sparse-loss-band.png")
        page.goto(f"{shared_stack}/compare?runs={run_id}&metrics=loss/total")
        page.locator(f"{CHARTS} canvas").first.wait_for(timeout=90_000)
        page.wait_for_timeout(1000)
        _check_loss_band(page)
        page.screenshot(path=ARTIFACTS / "compare-sparse-loss-band.png")
        browser.close()
