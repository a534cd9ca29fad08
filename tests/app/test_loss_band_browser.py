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
#: Per chart (in page order): its title, the number of drawn items of each mark type in
#: its Vega scenegraph, and its y domain.
_MARKS_JS = f"""() => Array.from(document.querySelectorAll('{CHARTS}'), cell => {{
  const counts = {{}};
  const walk = node => {{
    if (!node) return;
    if (node.marktype) {{
      counts[node.marktype] = (counts[node.marktype] || 0) + (node.items || []).length;
    }}
    for (const child of node.items || []) walk(child);
  }};
  walk(cell.vegaView.scenegraph().root);
  return {{title: cell.innerText, marks: counts,
           y: cell.vegaView.scale('y').domain().map(Number)}};
}})"""


def _check_loss_band(page) -> None:
    charts = page.evaluate(_MARKS_JS)
    loss = next(c for c in charts if "loss/total" in c["title"] or "Loss" in c["title"])
    assert loss["marks"].get("area", 0) >= 1, loss  # the band
    assert loss["marks"].get("line", 0) >= 1, loss
    assert loss["y"][1] >= 1.4, loss  # the band's top: the last spikes (~1.5)


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
