"""What a watching tab's live charts poll: a feed per tab, answered over HTTP.

The Run page draws one tab of charts (a ``ChartRequest``) as one element
(``app.panels.live_charts``). While the run trains, that element asks the server for
what changed every ``POLL_S``: ``GET <base>/_spherescope/live/<token>?after=<step>``
(``app/server.py`` routes it to ``answer``). The feed behind the token holds the tab's
series (``app.data.LiveSeries``: the first read downsampled, then only the points
logged since) and the rows the tab holds, so an answer carries, for each chart whose rows
changed, the rows added and the positions of those dropped (``live_chart_wire.rows_change``),
and nothing when no step was logged. No script run, no element re-rendered:
a Streamlit fragment rerun re-rendered every element of the page and re-laid out every
Vega view, most of a watching tab's cost (bench/dashboard_speed).

A token is issued only by a script run of a session that passed ``app.auth``, is
unguessable, and names one run and chart choice: the capability to read what that
page already shows. Feeds not polled for ``IDLE_S`` are dropped (a closed tab); a
tab whose feed was dropped asks its page to run again, which opens a new one.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from app import data
from app.panels import shared_charts, training_charts
from app.panels.live_chart_wire import LiveChart, Rows, rows_change
from app.transforms import time_at_steps
from sphere_engine.catalogue import METRICS, ChartGroup, Source, find, key_metrics

EVAL = Source.EVALUATION
#: Drawn by default in the evaluation chart: the catalogue's key metrics in [0, 1].
DEFAULT_EVALS = tuple(k for k in key_metrics() if (m := find(k, EVAL)) and m.unit == "fraction")
#: Offered in the evaluation picker before the run has evaluated.
EVAL_KEYS = tuple(m.key for m in METRICS if EVAL in m.sources and not m.is_family)
PER_SERIES_POINTS = 1000
#: While the run trains, fewer points per series keep each redraw cheap (the charts
#: are ~600 px wide, and each bucket keeps its min and max); the finished run gets the
#: full budget.
LIVE_SERIES_POINTS = 75
#: How often a watching tab asks for new points (seconds). An answer without new
#: steps costs the server a stat and the browser nothing; with the run's tracker
#: flushing every 0.25 s while watched, a step is drawn about a second after it is
#: logged. A tab whose refreshes take more than a tenth of this waits longer between
#: them (``live_charts.js``'s ``BUSY_SHARE``): on a busy machine, watching yields to
#: training.
POLL_S = 1.0
IDLE_S = 60.0
MAX_FEEDS = 256
ROUTE = "_spherescope/live"
EVALUATION_ID = "evaluation"


@dataclass(frozen=True)
class ChartRequest:
    """What one tab of the Run page's charts shows (hashable: it keys built charts)."""

    run_id: str
    groups: tuple[tuple[ChartGroup, tuple[str, ...]], ...]
    log_y: bool
    log_color: bool
    x: str
    smoothing: float
    evals: tuple[str, ...] | None  # None: a tab without the evaluation chart
    live: bool
    #: What the evaluations ran on (``data.evaluation_set.split_title``): the chart's title.
    evaluated_on: str = "test split"

    @property
    def names(self) -> list[str]:
        return sorted({key for _, keys in self.groups for key in keys})

    @property
    def points_per_series(self) -> int:
        return LIVE_SERIES_POINTS if self.live else PER_SERIES_POINTS


@dataclass(frozen=True)
class Drawn:
    """One tab's built charts, in order (the evaluation chart last), and its captions."""

    charts: tuple[tuple[str, LiveChart], ...]
    last_step: int
    caption: str
    notes: tuple[str, ...]


def build(
    request: ChartRequest,
    series: pd.DataFrame,
    totals: data.Totals,
    *,
    kept: Mapping[str, LiveChart] | None = None,
) -> Drawn:
    """The charts of ``request`` from ``series``, built once per (request, last step)
    in this process: tabs watching the same run with the same choices share them.

    ``kept``: charts (by id) a tab has off screen, used as they are instead of built
    anew (the tab asks for them when they come into view): building the charts was
    most of a poll's server time, and a tab on a laptop's screen shows two of six."""
    last_step = int(series["step"].max()) if len(series) else 0
    key = (request, last_step)
    built = shared_charts.get(key)
    if built is not None:
        return built
    kept = kept or {}
    drawn = []
    by_name = training_charts.split_by_name(series)
    for group, keys in request.groups:
        if group.id in kept:
            drawn.append((group.id, kept[group.id]))
            continue
        chart = training_charts.group_chart(
            group,
            list(keys),
            request.run_id,
            series,
            totals,
            log_y=request.log_y,
            log_color=request.log_color,
            x=request.x,
            points=request.points_per_series,
            by_name=by_name,
        )
        if chart is not None:
            drawn.append((group.id, chart))
    notes = []
    if request.evals is not None:
        evaluation = kept.get(EVALUATION_ID) or _evaluation(
            request.run_id, request.evals, x=request.x, clock=series, where=request.evaluated_on
        )
        if evaluation is not None:
            drawn.append((EVALUATION_ID, evaluation))
        else:
            notes.append("No evaluation yet (the first one runs at diagnostics.eval_every).")
    shown = [f"{chart.title} {chart.note}" for _, chart in drawn if chart.note]
    if shown:
        notes.append("Points drawn of those logged: " + " · ".join(shown))
    logged = max(totals.values(), default=0)
    caption = f"{logged:,} points logged per metric, up to step {last_step:,}"
    built = Drawn(tuple(drawn), last_step, caption, tuple(notes))
    if not kept:  # what any tab gets for this step: shared
        shared_charts.put(key, built)
    return built


def _evaluation(
    run_id: str, evals: tuple[str, ...], *, x: str, clock: pd.DataFrame, where: str
) -> LiveChart | None:
    if not evals:  # nothing chosen: the paper's metrics, as soon as they are logged
        available = data.eval_names([run_id])
        evals = tuple(e for e in DEFAULT_EVALS if e in available)
    if not evals:
        return None
    frame = data.eval_series([run_id], list(evals))
    if frame.empty:
        return None
    if x != "step":
        frame = frame.assign(**{x: time_at_steps(frame, clock, x)})
    return training_charts.lines(
        frame,
        x=x,
        title=f"Evaluation on the {where}",
        total=None,
        log_y=False,
        legend_title="metric",
    )


@dataclass
class Feed:
    """One tab's charts of one run: their series, read incrementally, and what the tab
    holds (chart id → (spec, rows in the tab's order)) once it has drawn the answer
    numbered ``seq``: a poll names the answer it drew last, and a tab that drew
    another (an answer lost, a script run's charts drawn after a poll's) gets every
    chart's rows whole instead of changes to rows it does not hold."""

    request: ChartRequest
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    sent: dict[str, tuple[str, Rows]] = field(default_factory=dict)
    seq: int = 0
    #: The charts last built for the tab, and the ids of those kept as they were then
    #: (off screen): a poll with no new step and no such chart in view builds nothing.
    drawn: Drawn | None = None
    kept: frozenset[str] = frozenset()
    polled_at: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.budget = self.request.points_per_series * max(len(self.request.names), 1)
        self.series = data.LiveSeries(
            self.request.run_id, self.request.names, max_points=self.budget
        )

    def read(self, shown: frozenset[str] | None = None) -> Drawn:
        """The charts with every point logged so far; with ``shown``, the ids of the
        charts the tab has in view, only those are built anew (``build``'s ``kept``)."""
        if self.request.smoothing == 0:  # only the points added since the last read
            series, totals = self.series.read()
        else:  # an EMA needs the whole series (see app.data.reads)
            series, totals = data.metric_series(
                [self.request.run_id],
                self.request.names,
                smoothing=self.request.smoothing,
                max_points=self.budget,
            )
        held = {} if self.drawn is None else dict(self.drawn.charts)
        last_step = int(series["step"].max()) if len(series) else 0
        if self.drawn is not None and self.drawn.last_step == last_step:
            # no new step: only the charts that were kept older and came into view
            older = self.kept if shown is None else self.kept & shown
            if not older:
                return self.drawn
            kept, self.kept = {k: c for k, c in held.items() if k not in older}, self.kept - older
        else:
            kept = {} if shown is None else {k: c for k, c in held.items() if k not in shown}
            self.kept = frozenset(kept)
        self.drawn = build(self.request, series, totals, kept=kept)
        return self.drawn

    def current(self) -> tuple[Drawn, int]:
        """The charts now, all of which the page sends (a script run draws them all),
        and the number the tab's element names them by in its polls."""
        with self.lock:
            drawn = self.read()
            self.sent = {name: (chart.spec, chart.table) for name, chart in drawn.charts}
            self.seq += 1
            self.polled_at = time.monotonic()
            return drawn, self.seq

    def changes(
        self, after: int, seq: int | None = None, shown: frozenset[str] | None = None
    ) -> str:
        """The answer to a poll from a tab that draws up to step ``after``, drew the
        answer ``seq`` last (None: whatever it drew, all rows are sent) and has the
        charts ``shown`` in view (None: all): JSON with the run's state, the captions,
        and when a chart changed, the charts' order and the spec and row changes of
        each (JSON inside as is, not re-encoded); ``applies_to`` names the state the changes
        apply to, ``seq`` the state they make."""
        with self.lock:
            self.polled_at = time.monotonic()
            data.mark_watched(self.request.run_id)  # it flushes more often while watched
            try:
                active = data.is_active(data.run(self.request.run_id).status)
            except ValueError:  # deleted meanwhile: nothing more will come
                active = False
            drawn = self.read(shown)
            if seq != self.seq:  # the tab holds something else: send it all
                self.sent = {}
            parts, sent, changed = [], {}, False
            for name, chart in drawn.charts:
                spec, held = self.sent.get(name, ("", None))
                part = f'{{"id":{json.dumps(name)}'
                if chart.spec != spec:  # as a string, the form a script run sends
                    part += f',"spec":{json.dumps(chart.spec)}'
                    held = None  # a chart embedded anew draws all its rows
                rows, held = rows_change(held, chart)
                sent[name] = (chart.spec, held)
                changed = changed or chart.spec != spec or bool(rows)
                parts.append(part + rows + "}")
            if not changed and list(sent) == list(self.sent):
                parts = []  # nothing to draw: the state alone
            self.sent = sent
            self.seq += 1
            head = {
                "active": active,
                "last_step": drawn.last_step,
                "caption": drawn.caption,
                "notes": list(drawn.notes),
                "applies_to": seq,
                "seq": self.seq,
            }
            charts = f',"charts":[{",".join(parts)}]' if parts else ""
            return json.dumps(head)[:-1] + charts + "}"


_lock = threading.Lock()
_feeds: OrderedDict[str, Feed] = OrderedDict()


def open_feed(request: ChartRequest, token: str | None) -> Feed:
    """The feed ``token`` names when it shows ``request``, else a new one."""
    with _lock:
        _drop_idle()
        feed = _feeds.get(token) if token else None
        if feed is None or feed.request != request:
            feed = Feed(request)
            _feeds[feed.token] = feed
            while len(_feeds) > MAX_FEEDS:
                _feeds.popitem(last=False)
        _feeds.move_to_end(feed.token)
        return feed


def answer(
    token: str, after: int, seq: int | None = None, shown: frozenset[str] | None = None
) -> str | None:
    """A poll's answer (``Feed.changes``), or None for a token no feed has (never
    issued, or dropped after ``IDLE_S`` without a poll)."""
    with _lock:
        _drop_idle()
        feed = _feeds.get(token)
    return None if feed is None else feed.changes(after, seq, shown)


def shown_ids(text: str | None) -> frozenset[str] | None:
    """A poll's ``shown`` (a JSON list of chart ids; absent: None, every chart); a
    ``ValueError`` naming the field for anything else."""
    if text is None:
        return None
    try:
        ids = json.loads(text)
    except ValueError:
        ids = None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"shown: {text[:80]!r} is not a JSON list of chart ids")
    return frozenset(ids)


def _drop_idle() -> None:
    now = time.monotonic()
    for token in [t for t, feed in _feeds.items() if now - feed.polled_at > IDLE_S]:
        del _feeds[token]
