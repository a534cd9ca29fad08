"""The dashboard's own browser elements (Streamlit components v2): one declaration."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

_HERE = Path(__file__).parent


def element(name: str, stem: str):
    """The element ``name`` whose code and style are ``<stem>.js`` and ``<stem>.css``
    beside this module. Not isolated in a shadow root: it takes the page's fonts, and
    the browser tests find its parts by class."""
    return st.components.v2.component(
        name,
        js=(_HERE / f"{stem}.js").read_text(),
        css=(_HERE / f"{stem}.css").read_text(),
        isolate_styles=False,
    )
