"""``app/server.py``: the page it answers deep links with, and which paths it answers."""

from __future__ import annotations

from app import server
from app.navigation import PAGES


def test_the_deep_link_page_tells_the_frontend_the_server_root_before_its_bundle() -> None:
    html = server.deep_link_index("")
    setting = html.index("window.__streamlit = {BACKEND_BASE_URL")
    assert 'new URL("/", window.location.origin)' in html
    assert setting < html.index('<script type="module"')  # read once, when the bundle loads


def test_under_a_base_url_path_the_root_is_that_path() -> None:
    assert 'new URL("/sphere/", window.location.origin)' in server.deep_link_index("/sphere")


def test_every_page_but_the_root_one_has_a_route() -> None:
    paths = {route.path for route in server.deep_link_routes()}
    assert paths == {f"/{p.url_path}" for p in PAGES if not p.default}
    assert "/run" in paths and "/" not in paths
