"""The Runs page in headless Chromium against a real dashboard: the key metrics in view
at 1280 px, and bulk archive / delete through the browser reaching the store."""

from __future__ import annotations

import re
import time

import pytest
from dashboard_server import dashboard
from test_dashboard_e2e import _settle

from db.catalogue.manage import gc
from db.catalogue.query import query_runs
from db.store import RunStore

pytestmark = pytest.mark.e2e
#: The grid's accessible header cells: glide-data-grid renders only the columns in view.
_HEADERS = '[data-testid="stDataFrame"] [role="columnheader"]'


def _finished(store: RunStore, name: str, recall: float) -> str:
    run_id = store.create_run({"optimizer": {"lr": 0.1}}, name, status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in (1, 2, 3):
            tracker.track_many({"loss/total": 0.5 / step, "norm/var": 0.01 * step}, step)
        tracker.track_eval({"recall@1": recall}, 3)
    store.end_run(run_id, "finished")
    return run_id


def _name_cell(page, name: str):
    return page.locator('[role="gridcell"]', has_text=re.compile(rf"^{re.escape(name)}$")).first


def _archived_soon(store: RunStore, expected: set[str]) -> set[str]:
    """The archived runs once they are ``expected`` (the archive's rerun may still be
    writing when the browser looks idle), or as they are after 30 s."""
    deadline = time.monotonic() + 30
    while True:
        archived = set(query_runs(store, archived=True).rows["run_id"])
        if archived == expected or time.monotonic() > deadline:
            return archived
        time.sleep(0.2)


def _grid_names(page) -> list[str]:
    """The visible header names once the data grid has drawn."""
    page.locator(_HEADERS).first.wait_for(state="attached", timeout=90_000)
    return page.locator(_HEADERS).all_text_contents()


def _act_on_page(page, search: str, shown: list[str], gone: list[str], *buttons: str) -> None:
    """Search, wait until the grid shows the runs named ``shown`` and not those named
    ``gone`` (on a busy machine the rerun may start after ``_settle`` looked), select
    every run shown, and press ``buttons`` (widget keys) in turn."""
    field = page.locator(".st-key-runs-search input")
    field.fill(search)
    field.press("Enter")
    _settle(page)
    for name in shown:
        _name_cell(page, name).wait_for(state="attached", timeout=60_000)
    for name in gone:
        _name_cell(page, name).wait_for(state="detached", timeout=60_000)
    page.locator(".st-key-runs-select_page button").click()
    _settle(page)
    for key in buttons:
        page.locator(f".st-key-{key} button").click()
        _settle(page)


def test_key_metrics_in_view_and_bulk_archive_and_delete(tmp_path, browser):
    from app import data

    home = tmp_path / "home"
    store = RunStore(home)
    keep = _finished(store, "keep-a", 0.6)
    old = [_finished(store, "old-b", 0.7), _finished(store, "old-c", 0.8)]
    doomed = _finished(store, "trash-d", 0.9)
    with dashboard("main.py", {"SPHERESCOPE_HOME": str(home)}) as base:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(base + "/")
        names = _grid_names(page)
        labels = data.key_column_labels()
        # beside the name, in view without scrolling: main metric, loss, norm variance
        assert names[:4] == ["name", "R@1", labels["train:loss/total"], labels["train:norm/var"]]
        assert page.evaluate("document.querySelector('.dvn-scroller').scrollLeft") == 0

        _act_on_page(page, "old", ["old-b", "old-c"], ["keep-a", "trash-d"], "runs-archive")
        assert _archived_soon(store, set(old)) == set(old)
        page.locator(".st-key-runs-search input").fill("")
        page.locator(".st-key-runs-search input").press("Enter")
        _settle(page)
        page.locator(_HEADERS).first.wait_for(state="attached", timeout=60_000)
        assert "2 runs" in page.get_by_text("on disk in all").inner_text()  # archived left

        _act_on_page(page, "trash", ["trash-d"], ["keep-a"], "runs-delete", "runs-delete-confirm")
        page.get_by_text("No run matches these filters.").wait_for(timeout=60_000)
        page.close()
    assert not store.exists(doomed) and store.exists(keep)
    assert len(list((home / "trash").iterdir())) == 1
    assert gc(store).trash and not list((home / "trash").iterdir())  # gc empties the trash
