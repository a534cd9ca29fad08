"""The dashboard's token gate (app/auth.py) under AppTest: open on loopback; beyond it,
nothing is shown (no page, no run) until the session gives SPHERESCOPE_TOKEN."""

from __future__ import annotations

import pytest
from app_fixtures import APP_MAIN, texts
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

TOKEN = "s3cret-token"


@pytest.fixture
def bound_to():
    """Set the server address the app sees (as `--server.address` does); restored after."""
    previous = st_config.get_option("server.address")

    def bind(address: str) -> None:
        st_config.set_option("server.address", address)

    yield bind
    st_config.set_option("server.address", previous)


def dashboard(**query: str) -> AppTest:
    app = AppTest.from_file(str(APP_MAIN), default_timeout=60)
    for key, value in query.items():
        app.query_params[key] = value
    return app.run()


def shows_runs(app: AppTest, filled) -> bool:
    """The runs are listed: in the grid, or in the first screenful drawn before it."""
    from app.panels.runs_preview import CSS_CLASS

    if app.dataframe:
        return filled.sec in set(app.dataframe[0].value["run_id"])
    return any(CSS_CLASS in m.value and filled.sec in m.value for m in app.markdown)


def test_loopback_stays_open(filled, bound_to, monkeypatch) -> None:
    monkeypatch.delenv("SPHERESCOPE_TOKEN", raising=False)
    bound_to("127.0.0.1")
    app = dashboard()
    assert not app.exception and shows_runs(app, filled)


def test_beyond_loopback_without_a_configured_token_nothing_is_shown(
    filled, bound_to, monkeypatch
) -> None:
    monkeypatch.delenv("SPHERESCOPE_TOKEN", raising=False)
    bound_to("0.0.0.0")
    app = dashboard()
    assert not app.exception and not shows_runs(app, filled)
    assert any("SPHERESCOPE_TOKEN is not set" in t for t in texts(app.error))
    assert not app.text_input  # not even a login: there is no token to give


def test_beyond_loopback_the_token_is_asked_for_once(filled, bound_to, monkeypatch) -> None:
    monkeypatch.setenv("SPHERESCOPE_TOKEN", TOKEN)
    bound_to("0.0.0.0")
    app = dashboard()
    assert not app.exception and not shows_runs(app, filled)
    login = app.text_input(key="auth.token")

    login.set_value("wrong").run()
    assert not shows_runs(app, filled)
    assert "Wrong token." in texts(app.error)

    app.text_input(key="auth.token").set_value(TOKEN).run()
    assert not app.exception and shows_runs(app, filled)
    app.switch_page("views/launch.py").run()  # other pages too, without asking again
    assert not app.exception
    assert "auth.token" not in [w.key for w in app.text_input]


def test_beyond_loopback_the_token_may_come_in_the_url(filled, bound_to, monkeypatch) -> None:
    monkeypatch.setenv("SPHERESCOPE_TOKEN", TOKEN)
    bound_to("0.0.0.0")
    assert not shows_runs(dashboard(token="nope"), filled)
    assert shows_runs(dashboard(token=TOKEN), filled)
