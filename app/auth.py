"""Who may use the dashboard: anyone on this machine over loopback (as before); when the
server listens on another address, only who knows the operator's ``SPHERESCOPE_TOKEN``.

``require_access()`` runs first in ``app/main.py``, before any page: a session shows
nothing and launches nothing until it has given the token, once, either in the login
field or as ``?token=...`` in the URL. A server bound beyond loopback without a token
configured shows only an explanation (``spherescope up`` refuses to start that way).
"""

from __future__ import annotations

import hmac
import os

import streamlit as st

from db.network_access import TOKEN_ENV, is_loopback

GRANTED = "auth.granted"  # session_state key: this session gave the right token


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison (the time taken reveals nothing about the token)."""
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


def require_access() -> None:
    """Return when this session may use the dashboard; otherwise ask and ``st.stop()``."""
    address = st.get_option("server.address")
    if is_loopback(address) or st.session_state.get(GRANTED):
        return
    expected = os.environ.get(TOKEN_ENV, "")
    if not expected:
        st.error(
            f"This dashboard listens on {address or 'every interface'} but {TOKEN_ENV} is "
            "not set: restart it with a token (or on 127.0.0.1) to use it."
        )
        st.stop()
    if token_matches(st.query_params.get("token", ""), expected):
        st.session_state[GRANTED] = True
        return
    st.title("SphereScope")
    given = st.text_input("Access token", type="password", key="auth.token")
    if token_matches(given, expected):
        st.session_state[GRANTED] = True
        st.rerun()
    if given:
        st.error("Wrong token.")
    st.stop()
