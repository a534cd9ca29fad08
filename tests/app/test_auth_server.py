"""The token gate in a real Streamlit server bound to 0.0.0.0, seen by headless Chromium."""

from __future__ import annotations

import pytest
from dashboard_server import dashboard, require_chromium

pytestmark = pytest.mark.e2e

TOKEN = "s3cret-token"


@pytest.fixture
def exposed_app(tmp_path):
    require_chromium()
    env = {"SPHERESCOPE_HOME": str(tmp_path / "home"), "SPHERESCOPE_TOKEN": TOKEN}
    options = ("--server.address", "0.0.0.0", "--browser.gatherUsageStats", "false")
    with dashboard("main.py", env, *options) as base:
        yield base


def test_a_browser_sees_nothing_until_it_gives_the_token(exposed_app, browser) -> None:
    page = browser.new_page()
    page.goto(exposed_app + "/launch")
    page.get_by_label("Access token").wait_for(timeout=60_000)
    body = page.inner_text("body")
    assert "Launch" not in body and "Runs" not in body  # no navigation, no page

    page.get_by_label("Access token").fill("wrong")
    page.get_by_label("Access token").press("Enter")
    page.get_by_text("Wrong token.").wait_for(timeout=30_000)

    page.get_by_label("Access token").fill(TOKEN)
    page.get_by_label("Access token").press("Enter")
    page.get_by_text("No runs yet").wait_for(timeout=60_000)

    other = browser.new_page()  # a new session: the URL token works as well
    other.goto(exposed_app + f"/?token={TOKEN}")
    other.get_by_text("No runs yet").wait_for(timeout=60_000)
