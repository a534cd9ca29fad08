"""The Run page's charts as one custom element that keeps its Vega views and, while
the run trains, polls the server's live feed for what changed (``live_charts.js``).

Streamlit re-renders every element of a fragment on each of its runs and re-lays out
every Vega view: at a refresh every 1.5 s that was ~10 % of a core per watching tab
in the browser, and the script run itself most of the server's share. Here a refresh
is one small HTTP answer (``app.panels.live_feed``) with the rows added since the last
one, inserted into the views whose rows changed (a Vega changeset). Vega, Vega-Lite and
vega-embed are vendored under ``app/static`` (Streamlit's static serving,
``server.enableStaticServing``): nothing comes from the internet.
"""

from __future__ import annotations

import time

from app.navigation import base_path
from app.panels.elements import element
from app.panels.live_feed import EVALUATION_ID, POLL_S, ROUTE, Drawn, Feed
from sphere_engine.catalogue import numbers

_component = element("spherescope_live_charts", "live_charts")


def show(drawn: Drawn, *, feed: Feed | None, key: str, seq: int = 0) -> None:
    """Draw ``drawn``'s charts and captions; with a ``feed``, keep them live (``seq``:
    the number ``Feed.current`` gave ``drawn``, which the element's polls name)."""
    base = base_path()
    payload = {
        "libraries": f"{base}/app/static/vega",
        "feed": None
        if feed is None
        else {"url": f"{base}/{ROUTE}/{feed.token}", "poll_ms": int(POLL_S * 1000)},
        "charts": [
            {"id": name, "spec": chart.spec, "rows": chart.rows, "wide": name == EVALUATION_ID}
            for name, chart in drawn.charts
        ],
        "caption": drawn.caption,
        "notes": list(drawn.notes),
        "last_step": drawn.last_step,
        "seq": seq,
        # the tooltips write numbers by the one rule (catalogue.numbers.format_number)
        "numbers": {
            "significant": numbers.SIGNIFICANT,
            "small": numbers.SMALL,
            "large": numbers.LARGE,
        },
        "revision": time.monotonic_ns(),  # a script run's data, told apart from a re-render
    }
    # The element asks for a rerun when the run ended (the page then draws it as
    # finished) or its feed was dropped (a new one is opened): triggers rerun the app.
    _component(
        data=payload,
        key=key,
        on_ended_change=_rerun,
        on_expired_change=_rerun,
    )


def _rerun() -> None:
    """A trigger's callback: the rerun it causes is the point."""
