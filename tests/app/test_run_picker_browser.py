"""The run picker at lab scale in headless Chromium against a real dashboard: on a
store of 300 runs the Run page's box offers the newest ``PICK_LIMIT``; an old run is
not among them (the box's own filter finds nothing), the search box beside it asks
the catalogue, which finds it, and picking it opens it and names it in the link."""

from __future__ import annotations

import re

import pytest
from dashboard_server import ARTIFACTS, dashboard
from many_runs import OLD_NAME
from test_dashboard_e2e import _settle

pytestmark = pytest.mark.e2e
LOADED = '[data-testid="stMain"] h1'
BOX = ".st-key-run-select"
OPTION = '[role="option"]'


def _open_box(page, text: str) -> None:
    """Open the run box and type ``text`` into its own (browser-side) filter."""
    page.locator(f"{BOX} input").click()
    page.locator(f"{BOX} input").fill(text)
    page.wait_for_timeout(300)


def test_an_old_run_is_found_by_the_search_and_picked(many_runs, browser) -> None:
    home, run_ids = many_runs
    ARTIFACTS.mkdir(exist_ok=True)
    with dashboard("main.py", {"SPHERESCOPE_HOME": str(home)}) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            page.goto(base + "/run")
            page.locator(LOADED).first.wait_for(timeout=90_000)
            _settle(page)
            assert page.locator(f"{BOX} input").input_value().startswith("sweep-run-0299")
            # the browser was not sent the old run: the box's own filter finds nothing
            _open_box(page, OLD_NAME)
            assert page.locator(OPTION).filter(has_text=OLD_NAME).count() == 0
            _open_box(page, "sweep-run-02")  # runs the list offers are there
            assert page.locator(OPTION).filter(has_text="sweep-run-0299").count() == 1
            page.keyboard.press("Escape")

            search = page.locator(".st-key-run-select-search input")
            search.fill("needle")
            search.press("Enter")
            _settle(page)
            _open_box(page, "needle")
            page.screenshot(path=str(ARTIFACTS / "run-picker-search.png"))
            page.locator(OPTION).filter(has_text=OLD_NAME).click()
            _settle(page)
            page.wait_for_url(re.compile(rf"run_id={run_ids[0]}"), timeout=30_000)
            assert page.locator(f"{BOX} input").input_value().startswith(OLD_NAME)
            page.screenshot(path=str(ARTIFACTS / "run-picker-picked.png"))
        finally:
            page.close()
