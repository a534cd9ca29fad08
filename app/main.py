"""SphereScope dashboard entry point: ``streamlit run app/main.py`` (or ``spherescope up``).

Wires the pages with ``st.navigation``; every page is a thin file under ``app/pages``.
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


def main() -> None:
    st.set_page_config(page_title="SphereScope", page_icon=":material/language:", layout="wide")
    pages = {
        "Train": [
            st.Page(
                "pages/runs.py", title="Runs", icon=":material/list:", url_path="runs", default=True
            ),
            st.Page(
                "pages/launch.py",
                title="Launch",
                icon=":material/rocket_launch:",
                url_path="launch",
            ),
        ],
        "Analyse": [
            st.Page("pages/run.py", title="Run", icon=":material/monitoring:", url_path="run"),
            st.Page(
                "pages/compare.py",
                title="Compare",
                icon=":material/compare_arrows:",
                url_path="compare",
            ),
            st.Page(
                "pages/geometry.py",
                title="Geometry",
                icon=":material/scatter_plot:",
                url_path="geometry",
            ),
        ],
    }
    st.navigation(pages).run()


main()
