"""Small Streamlit helpers shared by the pages: error guard, chart display, empty states,
the link's runs (the run picker itself is ``app.panels.run_picker``).

Page files are registered with ``st.navigation`` by path (relative to ``app/main.py``),
so links and ``st.switch_page`` use the same paths.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Iterable
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from app.data.tables import preferred_runs

log = logging.getLogger("spherescope.app")

LAUNCH_PAGE = "views/launch.py"
RUNS_PAGE = "views/runs.py"
RUN_PAGE = "views/run.py"
COMPARE_PAGE = "views/compare.py"
GEOMETRY_PAGE = "views/geometry.py"

COMPOUND_CHARTS = (
    alt.VConcatChart,
    alt.HConcatChart,
    alt.ConcatChart,
    alt.RepeatChart,
    alt.FacetChart,
)
#: Live parts re-render this often (seconds): new points are on screen within 3 s.
LIVE_INTERVAL_S = 2.0
#: A page opened afresh draws its first content, then the rest in a full rerun this
#: many seconds later (``first_paint``): the browser paints the first chart before it
#: lays out and embeds the other panels.
FOLLOW_UP_S = 0.4
#: The same for a page whose first content is a chart (Run, Compare): at 0.4 s the
#: follow-up run's panels (tables, code, download buttons: their code loaded, laid out)
#: took the browser's main thread while Vega was still compiling and drawing that chart
#: (bench/dashboard_speed.py). A guess at "after the first chart": a timer cannot see it.
CHARTS_FOLLOW_UP_S = 1.5
FIRST_PAINT_KEY = "ui.first_paint"
FOLLOW_UP_KEY = "ui.follow_up"


def plural(count: int, noun: str) -> str:
    """ "1 run", "2 runs"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def friendly_error(error: Exception) -> str:
    """A short, readable message for ``error`` (no traceback)."""
    text = str(error).strip() or type(error).__name__
    if not isinstance(error, (ValueError, KeyError, FileNotFoundError)):
        text = f"{type(error).__name__}: {text}"
    return text if len(text) <= 400 else text[:397] + "…"


def guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``function``; an exception becomes an ``st.error`` message, never a traceback.

    Streamlit's own control flow (``st.stop``, ``st.rerun``, ``st.switch_page``) raises
    ``BaseException`` subclasses and passes through untouched.
    """

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except Exception as error:  # the guard's purpose: no traceback reaches the user
            log.exception("page error in %s", getattr(function, "__qualname__", function))
            st.error(f"Something went wrong: {friendly_error(error)}", icon=":material/warning:")
            return None

    return wrapper


FLASH_KEY = "ui.flash"


def flash(message: str) -> None:
    """A toast for the next script run: ``st.toast`` followed by ``st.rerun`` is lost
    when the rerun replaces the page before the browser has drawn it."""
    st.session_state.setdefault(FLASH_KEY, []).append(message)


def show_flashes() -> None:
    """The toasts ``flash`` kept for this run (once each)."""
    for message in st.session_state.pop(FLASH_KEY, []):
        st.toast(message)


def run_page(main: Callable[[], Any]) -> None:
    """Run a page's ``main`` inside the error guard, after the toasts kept for it."""
    show_flashes()
    guarded(main)()


def first_paint(page: str) -> bool:
    """True on this session's first script run of ``page``: the page then draws only
    its first content (its widgets and first chart) and calls ``follow_up`` for the rest.

    A page opened afresh (a link, a reload) makes the browser load the code of every
    kind of element it shows (Vega, the data grid, the code highlighter, download
    buttons) and embed every chart before it paints anything: on the Run page that was
    ~1 s after the data had arrived. Drawn in two script runs, the first chart is on
    screen before the heavier panels are sent. Later runs (widgets, live refreshes,
    the follow-up) draw the whole page."""
    painted: set[str] = st.session_state.setdefault(FIRST_PAINT_KEY, set())
    if page in painted:
        st.session_state.pop(FOLLOW_UP_KEY, None)
        return False
    painted.add(page)
    return True


def follow_up(after_s: float = FOLLOW_UP_S) -> None:
    """Rerun the whole page once, ``after_s`` from now (after ``first_paint``).

    A fragment whose timer fires once: its first call (inline, in this run) arms it;
    the timer's rerun reruns the app, which registers no timer (``first_paint`` is
    False from then on), so the frontend stops it."""
    st.session_state[FOLLOW_UP_KEY] = False

    @st.fragment(run_every=after_s)
    def rest_of_page() -> None:
        if st.session_state.get(FOLLOW_UP_KEY):  # the timer's rerun
            st.session_state.pop(FOLLOW_UP_KEY, None)
            st.rerun(scope="app")
        st.session_state[FOLLOW_UP_KEY] = True

    rest_of_page()


def show_chart(chart: alt.TopLevelMixin, *, key: str | None = None) -> None:
    """Render an Altair chart and, when it was downsampled, its "N of M points" caption."""
    # Vega's "fit" autosize (what a stretched chart asks for) works for single and
    # layered views only; a compound chart (a scatter matrix) keeps its own size. The
    # builders' specs are validated by their unit tests; skipping Altair's JSON schema
    # validation here halves the cost of every (live) redraw.
    compound = isinstance(chart, COMPOUND_CHARTS)
    show_spec(chart_spec(chart), compound=compound, key=key)


def chart_spec(chart: alt.TopLevelMixin) -> dict:
    """The chart's Vega-Lite dict (no schema validation: the builders' unit tests
    validate them), for ``show_spec`` and for caching a costly chart's spec."""
    return chart.to_dict(validate=False)


def show_spec(spec: dict, *, compound: bool = False, key: str | None = None) -> None:
    """Render a Vega-Lite dict built by ``chart_spec`` and its "N of M points" note."""
    if compound and "autosize" not in spec:
        # Streamlit gives a wrapped ``concat`` "fit", which Vega refuses for compound views
        spec = {**spec, "autosize": {"type": "pad", "contains": "padding"}}
    st.vega_lite_chart(spec, width="content" if compound else "stretch", key=key)
    note = (spec.get("usermeta") or {}).get("points_note")
    if note:
        st.caption(note)


def empty_state(
    message: str,
    *,
    page: str = LAUNCH_PAGE,
    label: str = "Launch a run",
    icon: str = ":material/rocket_launch:",
) -> None:
    """Explain what to do, link to the page that does it, and stop the page."""
    st.info(message, icon=":material/info:")
    st.page_link(page, label=label, icon=icon)
    st.stop()


def run_link(run_id: str, label: str | None = None) -> None:
    """A link to the Run page for ``run_id``."""
    st.page_link(
        RUN_PAGE,
        label=label or f"Run {run_id}",
        icon=":material/monitoring:",
        query_params={"run_id": run_id},
    )


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def query_param(name: str) -> str | None:
    value = st.query_params.get(name)
    return str(value) if value else None


def query_ids(name: str) -> list[str]:
    """The comma-separated run ids of query parameter ``name`` (``?runs=a,b``)."""
    value = query_param(name) or ""
    return [part.strip() for part in value.split(",") if part.strip()]


def warn_unknown_runs(wanted: Iterable[str], known: Collection[str]) -> list[str]:
    """Say which of the ``wanted`` run ids (from a link) name no run; return them.

    A page never silently shows other runs than the link asked for."""
    missing = [run_id for run_id in wanted if run_id not in known]
    if missing:
        ids = ", ".join(f"`{run_id}`" for run_id in missing)
        st.warning(
            f"No run with id {ids}: it was deleted or the link is mistyped. Pick runs below.",
            icon=":material/warning:",
        )
    return missing


RUN_ID_PARAM = "run_id"


def default_runs(frame: pd.DataFrame, wanted: str | None, count: int) -> list[str]:
    """The ``count`` runs a run picker shows first: the link's run (when it names one),
    then the newest runs with results (``tables.preferred_runs``); fewer when there are
    fewer runs."""
    known = set(frame["run_id"]) if not frame.empty else set()
    preferred = preferred_runs(frame, count + 1)
    first = [wanted] if wanted in known else []
    return [*first, *[r for r in preferred if r not in first]][:count]
