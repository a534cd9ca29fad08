"""The live Run page in headless Chromium against the real stack: a refresh that brings
new points updates the charts' Vega views in place (issue 14: watching must be cheap;
re-embedding ~16 views every 2 s cost the browser as much CPU as the server)."""

from __future__ import annotations

import pytest
from app_fixtures import config, scalars
from test_dashboard_e2e import CHROMIUM, CHROMIUM_ARGS, stack  # noqa: F401

from db.store import RunStore

pytestmark = pytest.mark.e2e

CHARTS = '[data-testid="stVegaLiteChart"]'
OVERVIEW_CHARTS = 4  # the open tab's charts (no evaluation yet): loss, norms, variance, cosines
#: Keep the drawn Vega views (canvas or svg elements) to look at them after a refresh.
_KEEP_VIEWS_JS = f"""() => {{
  window.__views = Array.from(document.querySelectorAll('{CHARTS}'),
    chart => chart.querySelector('canvas, svg'));
  return window.__views.filter(view => view !== null).length;
}}"""
_VIEWS_KEPT_JS = "() => window.__views.filter(view => view && view.isConnected).length"
_FIRST_PICTURE_JS = f"""() => {{
  const view = document.querySelector('{CHARTS} canvas, {CHARTS} svg');
  return view.tagName === 'CANVAS' ? view.toDataURL() : view.outerHTML;
}}"""


def _log(store: RunStore, run_id: str, steps: range) -> None:
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in steps:
            tracker.track_many(scalars(step, 0.1 + 0.01 * step), step)
            tracker.track_progress(step, 1000)
    store.heartbeat(run_id, steps[-1], 1000)  # not lost while the test watches


def test_a_live_refresh_updates_the_chart_views_in_place(stack, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    store = RunStore(tmp_path / "home")
    run_id = store.create_run(config(), "watched run")
    store.set_status(run_id, "running", device="cpu")
    _log(store, run_id, range(1, 21))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{stack}/run?run_id={run_id}")
        page.get_by_text("up to step 20").first.wait_for(timeout=60_000)
        page.locator(CHARTS).nth(OVERVIEW_CHARTS - 1).wait_for(timeout=60_000)
        page.wait_for_timeout(1500)  # the views finish drawing
        kept = page.evaluate(_KEEP_VIEWS_JS)
        assert kept >= OVERVIEW_CHARTS
        before = page.evaluate(_FIRST_PICTURE_JS)
        _log(store, run_id, range(21, 41))
        page.get_by_text("up to step 40").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)  # the new rows reach the views
        assert page.evaluate(_VIEWS_KEPT_JS) == kept  # no view was embedded anew
        assert page.evaluate(_FIRST_PICTURE_JS) != before  # and they show the new points
        # Another tab of charts is read and drawn when opened (lazy tabs), live too.
        norms = page.get_by_role("tab", name="Norms")
        norms.click()
        page.wait_for_function(
            f"document.querySelectorAll('{CHARTS}').length !== {kept}", timeout=30_000
        )
        assert norms.get_attribute("aria-selected") == "true"
        _log(store, run_id, range(41, 51))
        page.get_by_text("up to step 50").first.wait_for(timeout=30_000)
        assert page.locator(CHARTS).count() >= 1
        browser.close()


def test_zooming_one_chart_zooms_them_all_and_survives_a_refresh(stack, tmp_path):  # noqa: F811
    """Linked x: a wheel zoom on one chart redraws every chart on its x range (each
    view embedded anew with that domain), and a live refresh keeps the zoom."""
    from playwright.sync_api import sync_playwright

    store = RunStore(tmp_path / "home")
    run_id = store.create_run(config(), "zoomed run")
    store.set_status(run_id, "running", device="cpu")
    _log(store, run_id, range(1, 101))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{stack}/run?run_id={run_id}")
        page.get_by_text("up to step 100").first.wait_for(timeout=60_000)
        charts = page.locator(CHARTS)
        charts.nth(OVERVIEW_CHARTS - 1).wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
        kept = page.evaluate(_KEEP_VIEWS_JS)
        box = charts.nth(0).bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 80)
        for _ in range(5):
            page.mouse.wheel(0, -200)  # zoom in
            page.wait_for_timeout(50)
        page.mouse.move(box["x"] + 5, box["y"] - 40)  # the gesture ends
        reset = page.get_by_role("button", name="Reset x zoom (all charts)")
        reset.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)
        assert page.evaluate(_VIEWS_KEPT_JS) == 0  # every view drawn anew, on the new range
        page.evaluate(_KEEP_VIEWS_JS)
        _log(store, run_id, range(101, 121))
        page.get_by_text("up to step 120").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)
        assert page.evaluate(_VIEWS_KEPT_JS) == kept  # new rows, same views: still zoomed
        assert reset.is_visible()
        reset.click()
        reset.wait_for(state="detached", timeout=30_000)
        browser.close()
