"""The dashboard's server: ``streamlit run app/server.py`` (what ``spherescope up`` runs)
serves ``app/main.py`` with two additions Streamlit's own server lacks:

* deep links without failed requests: opened at ``/run?run_id=…``, Streamlit's page
  assumes the server may live under the page's path and probes
  ``/run/_stcore/health`` and ``/run/_stcore/host-config`` first (404s in the console,
  and a retry before it connects; streamlit/streamlit#7074). Each page's path is
  answered here with Streamlit's own ``index.html`` plus the one setting its frontend
  reads for where the server is (``window.__streamlit.BACKEND_BASE_URL``, the
  mechanism of streamlit/streamlit#11378), so it connects to the root at once. The
  page is served at ``/`` unchanged: there the frontend already probes the root only.
* a warm start: ``app/warmup.py`` runs when the server starts, so the first visitor
  does not wait for imports and first reads;
* the live feed the Run page's charts poll while a run trains (``live_feed_route``).

``streamlit run app/main.py`` still works, without these three: its Run page draws a
training run's charts as they were when the page ran (a rerun redraws them).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

# Streamlit puts app/ (not the repository) on sys.path; see app/main.py.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import streamlit as st  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import HTMLResponse, JSONResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from app.navigation import base_path, deep_link_paths  # noqa: E402
from app.panels import live_feed  # noqa: E402
from app.warmup import start_warm_up  # noqa: E402

_HEAD = "<head>"


def deep_link_index(base: str) -> str:
    """Streamlit's ``index.html`` telling its frontend the server is at ``base`` + "/"
    of this origin (a script before the bundle, which reads it once at load)."""
    from streamlit import file_util

    html = (Path(file_util.get_static_dir()) / "index.html").read_text(encoding="utf-8")
    if _HEAD not in html:  # another Streamlit's page: serve it unchanged
        return html
    setting = (
        "<script>window.__streamlit = {BACKEND_BASE_URL: "
        f"new URL({json.dumps(base + '/')}, window.location.origin).href}};</script>"
    )
    return html.replace(_HEAD, _HEAD + setting, 1)  # first in the page, before any script


def deep_link_routes() -> list[Route]:
    """One route per page path (``/run``, ``/compare``, …) answering the patched page.

    Routes come before Streamlit's static files, which would answer the plain page."""
    base = base_path()
    page = deep_link_index(base)

    async def index(request: Request) -> HTMLResponse:
        # no-cache like Streamlit's own index.html: a new Streamlit brings a new bundle
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    return [Route(f"{base}/{path}", index, methods=["GET", "HEAD"]) for path in deep_link_paths()]


def live_feed_route() -> Route:
    """``GET <base>/_spherescope/live/<token>?after=<step>&seq=<n>&shown=<ids>``: what a
    watching tab's live charts poll (``app.panels.live_feed``). A plain function:
    Starlette runs it in its thread pool, off the event loop, while it reads the store."""
    base = base_path()

    def live(request: Request) -> Response:
        after = request.query_params.get("after", "")
        if not after.lstrip("-").isdigit():
            return JSONResponse({"error": f"after: {after!r} is not a step number"}, 400)
        seq = request.query_params.get("seq", "")  # the answer the tab drew last
        try:
            shown = live_feed.shown_ids(request.query_params.get("shown"))  # charts in view
        except ValueError as error:
            return JSONResponse({"error": str(error)}, 400)
        body = live_feed.answer(
            request.path_params["token"], int(after), int(seq) if seq.isdigit() else None, shown
        )
        if body is None:  # 410, not 404: the tab opens a new feed (a 404 is no route)
            return JSONResponse({"error": "token: no such live feed (expired?)"}, 410)
        return Response(body, media_type="application/json", headers=_NO_STORE)

    return Route(f"{base}/{live_feed.ROUTE}/{{token}}", live, methods=["GET"])


_NO_STORE = {"Cache-Control": "no-store"}


@asynccontextmanager
async def warm_start(_: st.App) -> AsyncIterator[None]:
    start_warm_up()
    yield


# Serving users, not the app's authors: no Deploy button nor author menu items. Set
# here because `spherescope up` runs from anywhere, where the repository's
# .streamlit/config.toml is not read (client options may be set at run time).
st.set_option("client.toolbarMode", "viewer")

app = st.App("main.py", routes=[*deep_link_routes(), live_feed_route()], lifespan=warm_start)
