"""The dashboard's pages, declared once: ``main.py`` builds ``st.navigation`` from them
and ``server.py`` answers their deep links (``/run?run_id=…``) with its own page.

Plain data (no Streamlit): the server reads the URL paths before any script runs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    """One ``st.Page``: its file (relative to ``app/main.py``), sidebar section, title,
    Material icon (``:material/name:``, drawn from the font Streamlit bundles) and URL
    path; ``default`` is served at ``/``; ``hidden`` pages are in no
    section of the sidebar."""

    file: str
    section: str
    title: str
    icon: str
    url_path: str
    default: bool = False
    hidden: bool = False


#: Every page icon is a bundled Material symbol: an emoji was an empty box on a machine
#: without an emoji font.
PAGES: tuple[PageSpec, ...] = (
    PageSpec("views/runs.py", "Train", "Runs", ":material/table_rows:", "overview", default=True),
    PageSpec("views/launch.py", "Train", "Launch", ":material/rocket_launch:", "launch"),
    PageSpec("views/run.py", "Analyse", "Run", ":material/monitoring:", "run"),
    PageSpec("views/compare.py", "Analyse", "Compare", ":material/compare_arrows:", "compare"),
    PageSpec("views/geometry.py", "Analyse", "Geometry", ":material/scatter_plot:", "geometry"),
    PageSpec("views/explorer.py", "Analyse", "Explorer", ":material/image_search:", "explorer"),
    PageSpec("views/study.py", "Analyse", "Study", ":material/science:", "study"),
    PageSpec("views/report.py", "Analyse", "Report", ":material/description:", "report"),
    # The default page is served at "/" only; this hidden twin answers /runs (the name
    # the sidebar shows), so a typed or bookmarked /runs finds the page.
    PageSpec("views/runs.py", "", "Runs", ":material/table_rows:", "runs", hidden=True),
)


def deep_link_paths() -> list[str]:
    """The URL paths a page is opened at besides ``/`` (the default page is served at
    ``/`` only)."""
    return [page.url_path for page in PAGES if not page.default]


def base_path() -> str:
    """``server.baseUrlPath`` as "" or "/prefix" (no trailing slash): where the
    server's own routes and static files live."""
    from streamlit import config

    prefix = str(config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{prefix}" if prefix else ""
