"""Every page opened by deep link, in headless Chromium against the dashboard server
``spherescope up`` runs (``app/server.py``): no failed request, no console error.

Opened at ``/run?run_id=…``, Streamlit's frontend first probed
``/run/_stcore/health`` and ``/run/_stcore/host-config`` (404s, streamlit/streamlit#7074)
before falling back to ``/``. Served by ``app/main.py`` alone this test fails.
"""

from __future__ import annotations

import pytest
from dashboard_server import dashboard, require_chromium

from app.navigation import PAGES
from db.store import RunStore

pytestmark = pytest.mark.e2e

#: A page has loaded once its script drew its title (every page starts with one).
LOADED = '[data-testid="stMain"] h1'


def _finished_run(store: RunStore, name: str) -> str:
    run_id = store.create_run({}, name, status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in range(1, 11):
            tracker.track_many({"loss/total": 1.0 / step, "norm/var": 0.1}, step)
        tracker.track_eval({"recall@1": 0.5}, 10)
        tracker.track_snapshot([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], [0, 1, 1], 10)
    store.set_status(run_id, "finished")
    return run_id


@pytest.fixture
def server(tmp_path):
    """``streamlit run app/server.py`` (as ``spherescope up`` starts it) on a store with
    two finished runs; yields (base URL, run ids)."""
    require_chromium()
    home = tmp_path / "home"
    store = RunStore(home)
    run_ids = [_finished_run(store, "first"), _finished_run(store, "second")]
    with dashboard("server.py", {"SPHERESCOPE_HOME": str(home)}) as base:
        yield base, run_ids


def test_every_page_opens_by_deep_link_without_failed_requests(server, browser) -> None:
    base, (first, second) = server
    query = {"views/run.py": f"?run_id={first}", "views/geometry.py": f"?run_id={first}"}
    query["views/compare.py"] = f"?runs={first},{second}"
    paths = ["/", *(f"/{p.url_path}{query.get(p.file, '')}" for p in PAGES if not p.default)]
    failed: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    page.on("console", lambda m: m.type == "error" and failed.append(f"console: {m.text}"))
    try:
        for path in paths:
            page.goto(base + path)
            page.locator(LOADED).first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)  # the page's later requests (charts, media)
            assert not page.get_by_text("Page not found").count(), path
    finally:
        page.close()  # no event after this point
    assert not failed, f"failed requests or console errors on deep links: {failed}"
