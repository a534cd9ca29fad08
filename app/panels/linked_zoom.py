"""Linked x across the Run page: zooming or panning one chart sets every chart's x range.

Each chart is its own Vega view, so the views cannot share a scale in the browser. A
chart's x zoom (its scale-bound interval selection, ``ZOOM``) is reported to the server
(``on_select``), and the page draws every chart with that x domain in its spec. The
charts' keys carry a generation number that moves with the domain, so each view is
embedded afresh with the new domain and none keeps a zoom of its own. Because the
domain lives in the spec, a live refresh keeps it (Streamlit's frontend empties a
view's own scale-bound zoom whenever its data changes, which undid any zoom every 2 s).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

ZOOM = "zoom"
#: {"axis": the page's x axis choice, "domain": [low, high]} while zoomed.
ZOOM_STATE = "run.zoom"
ZOOM_GENERATION = "run.zoom_generation"


def chart_key(name: str) -> str:
    """A chart's widget key: its name and the zoom generation."""
    return f"run.chart.{name}.{st.session_state.get(ZOOM_GENERATION, 0)}"


def zoomed(key: str, axis: str) -> None:
    """``on_select`` callback: the chart ``key`` was zoomed, panned or reset."""
    state = st.session_state.get(key) or {}
    selection = (state.get("selection") or {}).get(ZOOM) or {}
    ranges = [list(values) for values in selection.values() if len(values) == 2]
    st.session_state[ZOOM_STATE] = {"axis": axis, "domain": ranges[0]} if ranges else None
    st.session_state[ZOOM_GENERATION] = st.session_state.get(ZOOM_GENERATION, 0) + 1


def domain(axis: str) -> list[Any] | None:
    """The linked x domain for the page's x axis ``axis``, None when not zoomed."""
    state = st.session_state.get(ZOOM_STATE)
    return state["domain"] if state and state["axis"] == axis else None


def reset() -> None:
    st.session_state[ZOOM_STATE] = None
    st.session_state[ZOOM_GENERATION] = st.session_state.get(ZOOM_GENERATION, 0) + 1


def reset_button(axis: str) -> None:
    """ "Reset zoom", shown while the charts are zoomed."""
    if domain(axis) is not None:
        st.button("Reset x zoom (all charts)", key="run.zoom_reset", on_click=reset)


def with_x_domain(spec: dict[str, Any], x_domain: list[Any] | None) -> dict[str, Any]:
    """``spec`` with its x scale fixed to ``x_domain`` and marks clipped to the plot (a
    new dict; the cached spec is shared and never changed)."""
    if x_domain is None:
        return spec
    result = dict(spec)
    if "encoding" in spec:
        result["encoding"] = _x_fixed(spec["encoding"], x_domain)
    if "mark" in spec:
        result["mark"] = _clipped(spec["mark"])
    if "layer" in spec:
        result["layer"] = [with_x_domain(part, x_domain) for part in spec["layer"]]
    return result


def _x_fixed(encoding: dict[str, Any], x_domain: list[Any]) -> dict[str, Any]:
    if "x" not in encoding:
        return encoding
    x = dict(encoding["x"])
    x["scale"] = {**x.get("scale", {}), "domain": x_domain}
    return {**encoding, "x": x}


def _clipped(mark: str | dict[str, Any]) -> dict[str, Any]:
    return {"type": mark, "clip": True} if isinstance(mark, str) else {**mark, "clip": True}
