"""The sidebar's project picker: every page lists the runs of the chosen project
(``app.data.projects``); the choice lives in the session, so it follows the user from
page to page."""

from __future__ import annotations

import streamlit as st

from app import data

ALL = "All projects"


def project_picker() -> None:
    """A select box in the sidebar, shown once a second project exists."""
    try:
        known = data.projects()
    except (OSError, RuntimeError, ValueError):  # an unreadable store: pages say why
        return
    chosen = st.session_state.get(data.PROJECT_KEY) or ""
    if len(known) < 2 and not chosen:
        return
    options = [ALL, *known] if chosen in ("", *known) else [ALL, *known, chosen]
    picked = st.sidebar.selectbox(
        "Project", options, index=options.index(chosen or ALL), key="sidebar.project"
    )
    st.session_state[data.PROJECT_KEY] = "" if picked == ALL else picked
