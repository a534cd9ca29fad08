"""Issue 39 in a real browser against the shared stack: the Run page's tiles wrap
instead of overlapping, a long live run's loss charts are drawn whatever its loss
looks like after downsampling, and a run whose result cannot be trusted carries a
marker beside its status on the Run page and in Compare."""

from __future__ import annotations

import math

import pytest
from app_fixtures import config, scalars
from dashboard_server import ARTIFACTS

from db.store import RunStore

pytestmark = pytest.mark.e2e

CHARTS = ".spherescope-live-chart"
LONG_STEPS = 12_000
#: Overlapping pairs of tiles (a tile's box reaching into the next one on its row).
_OVERLAPS_JS = """() => {
  const boxes = Array.from(document.querySelectorAll('.spherescope-tile'), tile => {
    const value = tile.lastElementChild;
    return {tile: tile.getBoundingClientRect(), value: value.getBoundingClientRect(),
            width: value.scrollWidth};
  });
  const found = [];
  boxes.forEach((a, i) => boxes.forEach((b, j) => {
    if (i === j) return;
    const sameRow = Math.abs(a.tile.top - b.tile.top) < 2;
    const end = a.value.left + a.width;
    if (sameRow && a.tile.left < b.tile.left && end > b.tile.left + 1) found.push([i, j]);
  }));
  return found;
}"""


def _long_live_run(store: RunStore) -> str:
    """A running run at step 12,000 of 20,000 whose loss is active on one step in four
    until step 2,400 and 0 after (a miner that finds violating triplets in few batches):
    every downsampled bucket's last value is 0, its max is not."""
    run_id = store.create_run(config(), "long live run")
    store.set_status(run_id, "running", device="cpu")
    with store.tracker(run_id, flush_interval=5) as tracker:
        for step in range(1, LONG_STEPS + 1):
            values = scalars(step, 0.1)
            if step > 2400 or step % 4 != 1:
                values["loss/total"] = values["loss/metric"] = 0.0
            tracker.track_many(values, step)
            tracker.track_progress(step, 20_000)
    store.heartbeat(run_id, LONG_STEPS, 20_000)
    return run_id


def _diverged_run(store: RunStore, name: str, *, diverge: bool) -> str:
    run_id = store.create_run(config(), name)
    store.set_status(run_id, "running", device="cpu")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in range(1, 41):
            values = scalars(step, 0.05 + 0.01 * step)
            if diverge and step >= 30:
                values["loss/total"] = math.nan
            tracker.track_many(values, step)
        tracker.track_eval({"recall@1": 0.5, "map@r": 0.3}, 40)
    store.end_run(run_id, "finished")
    return run_id


def test_tiles_loss_charts_and_the_untrusted_marker(shared_stack, stack_home, browser):
    store = RunStore(stack_home)
    long_run = _long_live_run(store)
    bad = _diverged_run(store, "blown up", diverge=True)
    good = _diverged_run(store, "healthy", diverge=False)
    page = browser.new_page(viewport={"width": 1440, "height": 1600})
    page.goto(f"{shared_stack}/run?run_id={long_run}")
    page.get_by_text(f"up to step {LONG_STEPS - 96:,}").first.wait_for(timeout=90_000)
    page.locator(CHARTS).nth(5).wait_for(timeout=60_000)
    titles = page.evaluate(
        f"() => Array.from(document.querySelectorAll('{CHARTS}'), c => c.innerText)"
    )
    assert page.locator(CHARTS).count() == 6, titles  # both loss terms, sec, norms...
    page.screenshot(path=ARTIFACTS / "run-long-live-1440.png")
    for width in (1440, 1280):
        page.set_viewport_size({"width": width, "height": 1600})
        page.wait_for_timeout(500)
        assert page.evaluate(_OVERLAPS_JS) == [], f"tiles overlap at {width} px"

    # The stack runs outside the repository (dashboard_server.spherescope_up): no
    # Deploy button all the same; the sidebar's icons are Material symbols.
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
    assert page.get_by_role("button", name="Deploy").count() == 0
    icons = page.locator('[data-testid="stSidebarNav"] [data-testid="stIconMaterial"]')
    assert icons.count() >= 7
    _check_dark_captions(browser, f"{shared_stack}/run?run_id={long_run}")

    page.goto(f"{shared_stack}/run?run_id={bad}")
    marker = page.locator(".spherescope-tile .spherescope-untrusted")
    marker.wait_for(timeout=60_000)
    status = page.locator(".spherescope-tile").first.inner_text()
    assert "finished" in status and "untrusted" in status
    assert "diverged" in (marker.get_attribute("title") or "")

    page.goto(f"{shared_stack}/compare?runs={bad},{good}")
    page.get_by_text("Final metrics").first.wait_for(timeout=90_000)
    marked = page.locator(".spherescope-untrusted")
    marked.first.wait_for(timeout=60_000)
    assert marked.count() == 1  # the diverged run's, not the healthy one's
    page.screenshot(path=ARTIFACTS / "compare-untrusted.png", full_page=True)


#: The relative luminance (0 black .. 1 white) of an element's computed text colour,
#: with its opacity: what a reader sees of it on the page's background.
_LUMINANCE_JS = """selector => {
  const element = document.querySelector(selector);
  const style = getComputedStyle(element);
  const [r, g, b] = style.color.match(/[\\d.]+/g).map(Number);
  return {luminance: (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255, color: style.color};
}"""


def _check_dark_captions(browser, url: str) -> None:
    """In dark mode (the browser's preference, which Streamlit follows) the live
    charts' caption is light text, not dark grey on black."""
    page = browser.new_page(viewport={"width": 1440, "height": 1200}, color_scheme="dark")
    page.goto(url)
    caption = ".spherescope-live-caption"
    page.locator(caption).first.wait_for(timeout=60_000)
    seen = page.evaluate(_LUMINANCE_JS, caption)
    assert seen["luminance"] > 0.5, seen
    page.close()


#: Each chart's x and y domains (``cell.vegaView``: the chart element's Vega view).
_DOMAINS_JS = f"""axis => Array.from(document.querySelectorAll('{CHARTS}'),
  cell => cell.vegaView.scale(axis).domain().map(Number))"""


def test_compare_zoom_is_linked_kept_in_the_url_and_log_axes_show_decades(
    shared_stack, stack_home, browser
):
    store = RunStore(stack_home)
    runs = [_diverged_run(store, f"zoom {i}", diverge=False) for i in range(2)]
    metrics = "loss/total,norm/var"  # norm variance: a log axis (the default scale)
    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    page.goto(f"{shared_stack}/compare?runs={','.join(runs)}&metrics={metrics}&zoom=step:10,30")
    charts = page.locator(CHARTS)
    charts.nth(1).locator("canvas").wait_for(timeout=90_000)
    page.wait_for_timeout(1000)
    assert page.evaluate(_DOMAINS_JS, "x") == [[10, 30], [10, 30]]  # the link's zoom
    # the log axis spans whole decades, ticked at powers of ten
    low, high = page.evaluate(_DOMAINS_JS, "y")[1]
    assert [math.log10(low), math.log10(high)] == [
        pytest.approx(round(math.log10(low))),
        pytest.approx(round(math.log10(high))),
    ], (low, high)
    box = charts.nth(0).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 120)
    for _ in range(4):
        page.mouse.wheel(0, 200)  # zoom out, on the first chart
        page.wait_for_timeout(50)
    page.wait_for_timeout(500)
    first, second = page.evaluate(_DOMAINS_JS, "x")
    assert first[1] - first[0] > 20 and first == pytest.approx(second)  # linked
    assert "zoom=step" in page.url and "zoom=step%3A10%2C30" not in page.url, page.url
