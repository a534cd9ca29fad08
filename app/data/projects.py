"""Projects: the one the sidebar's picker chose (shared by every page through the
session) and the runs listings of that project."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app.data.cache import LIST_TTL, store_read
from app.data.reads import runs as _runs
from db.store import RunStore

#: Session key of the project chosen in the sidebar ("" or absent: every project).
PROJECT_KEY = "spherescope.project"


def selected_project() -> str | None:
    """The project the sidebar's picker chose, None for every project."""
    return st.session_state.get(PROJECT_KEY) or None


def runs(**filters: Any) -> pd.DataFrame:
    """``reads.runs`` of the chosen project (``project=None`` given: every project)."""
    filters.setdefault("project", selected_project())
    return _runs(**filters)


@store_read(LIST_TTL)
def projects(store: RunStore) -> list[str]:
    """Every project with runs, sorted (from the run catalogue)."""
    from db.catalogue.query import projects as catalogue_projects

    return catalogue_projects(store)


@store_read(LIST_TTL)
def tag_names(store: RunStore, project: str | None = None) -> list[str]:
    """Every tag of any run of ``project`` (None: of every project), sorted."""
    from db.catalogue.query import tag_names as catalogue_tags

    return catalogue_tags(store, project)


@store_read(LIST_TTL)
def sweep_ids(store: RunStore, project: str | None = None) -> list[str]:
    """Sweep ids of ``project``'s runs (None: every project's), newest first."""
    from db.catalogue.query import sweep_ids as catalogue_sweeps

    return catalogue_sweeps(store, project)
