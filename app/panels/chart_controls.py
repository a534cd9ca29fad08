"""The chart controls of the Run and Compare pages (smoothing, log scale, x axis): one
widget, whose smoothing and x axis follow the user from page to page and live in the
URL (``?smooth=0.6&x=time``), so a reload or a pasted link shows the same view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from app.charts.base import X_AXES, X_LABELS

#: Where a choice is kept across pages (a widget's own state is dropped by Streamlit
#: when a page without it runs) and its query parameter.
SMOOTHING = ("view.smoothing", "smooth")
X_AXIS = ("view.x", "x")
LOG_Y = ("view.log", "log")
DEFAULT_SMOOTHING = 0.0
LOG_Y_LABEL = "Log scale for variance, CV, gradient norm and lr"


@dataclass(frozen=True)
class ChartControls:
    """What the controls chose."""

    smoothing: float
    log_y: bool
    x: str


def _smoothing(text: str) -> float | None:
    try:
        value = round(float(text), 2)
    except ValueError:
        return None
    return value if 0.0 <= value <= 0.99 else None


def _x_axis(text: str) -> str | None:
    return text if text in X_AXES else None


def _flag(text: str) -> bool | None:
    return {"1": True, "0": False}.get(text)


def _restore(
    widget: str, shared: tuple[str, str], parse: Callable[[str], Any], default: Any
) -> None:
    """Give the widget ``widget`` its value before it is drawn: the link's, else the
    one chosen on another page, else ``default`` (a widget drawn with a default and a
    value set through the session state draws a warning)."""
    if widget in st.session_state:  # drawn on the last run: the user's choice
        return
    state_key, param = shared
    linked = st.query_params.get(param)
    value = parse(str(linked)) if linked is not None else None
    if linked is not None and value is None:
        st.warning(f"Link parameter `{param}`: {str(linked)!r} is not a valid value; ignored.")
    if value is None:
        value = st.session_state.get(state_key, default)
    st.session_state[widget] = value


def _remember(widget: str, shared: tuple[str, str], show: Callable[[Any], str]) -> None:
    """Keep the widget's value for the other pages and in the URL."""
    state_key, param = shared
    value = st.session_state[widget]
    st.session_state[state_key] = value
    if st.query_params.get(param) != show(value):
        st.query_params[param] = show(value)


def chart_controls(page: str, *, log_color: bool = False) -> tuple[ChartControls, bool]:
    """Draw the controls with widget keys ``<page>.smoothing``, ``<page>.log`` and
    ``<page>.x`` (and ``<page>.log_color`` when ``log_color``: the norm heatmap's
    colour scale); the choices and the log colour toggle (False when not drawn)."""
    fields = (
        (f"{page}.smoothing", SMOOTHING, _smoothing, DEFAULT_SMOOTHING, lambda v: f"{v:g}"),
        (f"{page}.log", LOG_Y, _flag, True, lambda v: "1" if v else "0"),
        (f"{page}.x", X_AXIS, _x_axis, X_AXES[0], str),
    )
    # The link is read when the page is opened (a new session, or another page before);
    # afterwards the widgets own the values and write them to the URL.
    for widget, shared, parse, default, _ in fields:
        _restore(widget, shared, parse, default)
    left, middle, right = st.columns([2, 2, 2])
    log_y = left.toggle(LOG_Y_LABEL, key=f"{page}.log")
    colour = (
        left.toggle(
            "Log colour scale for the norm distribution (shows its thin tails)",
            value=False,
            key=f"{page}.log_color",
        )
        if log_color
        else False
    )
    smoothing = middle.slider(
        "Smoothing (debiased EMA weight)", 0.0, 0.99, step=0.01, key=f"{page}.smoothing"
    )
    x_axis = right.radio(
        "x axis",
        list(X_AXES),
        horizontal=True,
        key=f"{page}.x",
        format_func=X_LABELS.get,
    )
    for widget, shared, _, _, show in fields:
        _remember(widget, shared, show)
    return ChartControls(float(smoothing), bool(log_y), str(x_axis)), bool(colour)
