"""SphereScope dashboard script: run by ``spherescope up`` through ``app/server.py``
(or on its own: ``streamlit run app/main.py``).

Wires the pages (declared in ``app/navigation.py``) with ``st.navigation``; every page
is a thin file under ``app/views``. (Not ``app/pages``: a ``pages/`` folder next to the
entry file switches Streamlit to its file-based navigation for any deep link opened
before some session has run ``st.navigation``, e.g. ``/launch`` right after
``spherescope up``.)
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
from app.navigation import PAGES  # noqa: E402
from app.panels.project_picker import project_picker  # noqa: E402

#: The favicon is a bundled image: Streamlit fetches a ``:material/...:`` favicon from
#: fonts.gstatic.com (nothing the dashboard shows may come from the internet), and an
#: emoji one is an empty box on a machine without an emoji font.
APP_ICON = str(Path(__file__).resolve().parent / "static" / "favicon.png")


def main() -> None:
    st.set_page_config(page_title="SphereScope", page_icon=APP_ICON, layout="wide")
    require_access()  # beyond loopback: nothing is shown or launched without the token
    sections: dict[str, list[st.Page]] = {}
    for spec in PAGES:
        sections.setdefault(spec.section, []).append(
            st.Page(
                spec.file,
                title=spec.title,
                icon=spec.icon,
                url_path=spec.url_path,
                default=spec.default,
                visibility="hidden" if spec.hidden else "visible",
            )
        )
    page = st.navigation(sections)
    project_picker()  # in the sidebar, for every page
    page.run()


main()
