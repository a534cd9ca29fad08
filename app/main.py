"""SphereScope dashboard entry point: ``streamlit run app/main.py`` (or ``spherescope up``).

Wires the pages with ``st.navigation``; every page is a thin file under ``app/views``.
(Not ``app/pages``: a ``pages/`` folder next to the entry file switches Streamlit to
its file-based navigation for any deep link opened before some session has run
``st.navigation``, e.g. ``/launch`` right after ``spherescope up``.)
"""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run app/main.py` puts app/ (not the repository) on sys.path; the pages
# import the `app`, `db` and `sphere_engine` packages from the repository root.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import streamlit as st  # noqa: E402

from app.auth import require_access  # noqa: E402

#: Every icon is an emoji or a bundled Material symbol. The favicon must be an emoji:
#: Streamlit draws an emoji favicon as an inline SVG, but fetches a ``:material/...:``
#: favicon from fonts.gstatic.com (nothing the dashboard shows may come from the internet).
APP_ICON = "🌐"


def main() -> None:
    st.set_page_config(page_title="SphereScope", page_icon=APP_ICON, layout="wide")
    require_access()  # beyond loopback: nothing is shown or launched without the token
    pages = {
        "Train": [
            st.Page("views/runs.py", title="Runs", icon="📋", url_path="overview", default=True),
            st.Page("views/launch.py", title="Launch", icon="🚀", url_path="launch"),
        ],
        "Analyse": [
            st.Page("views/run.py", title="Run", icon="📈", url_path="run"),
            st.Page("views/compare.py", title="Compare", icon="⚖️", url_path="compare"),
            st.Page("views/geometry.py", title="Geometry", icon="🔵", url_path="geometry"),
            st.Page("views/report.py", title="Report", icon="📄", url_path="report"),
        ],
        # The default page is served at "/" only; this hidden twin answers /runs (the
        # name the sidebar shows), so a typed or bookmarked /runs finds the page.
        "": [
            st.Page("views/runs.py", title="Runs", icon="📋", url_path="runs", visibility="hidden"),
        ],
    }
    st.navigation(pages).run()


main()
