"""The live chart element's code, loaded early on a page whose first content is its
charts (Run, Compare).

The element (``app.panels.live_charts``) loads Vega, Vega-Lite and vega-embed (~280 kB
of script the browser must also compile) when it first mounts, which was once the
page's widgets were drawn and its charts built: the script's last message. An empty
element sent first, right under the title, starts that load while the server reads
and builds and the browser draws the widgets; ``done`` removes it once the charts are
sent (the libraries stay loaded: the document holds them, not the element).
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app.panels import live_charts, live_feed

_EMPTY = live_feed.Drawn((), 0, "", ())


def start(key: str) -> DeltaGenerator:
    """Send an empty chart element (``key``: unique on the page); returns its slot,
    for ``done``."""
    slot = st.empty()
    with slot:
        live_charts.show(_EMPTY, feed=None, key=key)
    return slot


def done(slot: DeltaGenerator) -> None:
    """Remove the empty element (a page that stops before its charts calls this too:
    an empty element left on it was a blank gap under the title)."""
    slot.empty()
