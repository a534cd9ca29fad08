"""The Run page's key numbers, at the top: step / total, rate, ETA, loss, norm
variance, the latest R@1 or accuracy, an "evaluation running" tile while a background
evaluation is in flight (the step it evaluates, for how long), the status with its
message, the device and host, and a Cancel button while the run is active."""

from __future__ import annotations

import time
from dataclasses import dataclass
from html import escape
from typing import Any

import pandas as pd
import streamlit as st

from app import data, ui
from app.panels import trust_marker
from sphere_engine.catalogue.numbers import format_number as number

#: (column of ``data.final_metrics``, tile label): the first of each tuple logged wins.
LOSS = (("train:loss/total", "loss"),)
VARIANCE = (("train:norm/var", "norm variance"),)
QUALITY = (
    ("eval:recall@1", "R@1"),
    ("eval:classifier_accuracy", "accuracy"),
    ("eval:linear_probe/accuracy", "probe accuracy"),
    ("eval:verification/accuracy", "verification accuracy"),
)
#: Asked for by their qualified column keys (``norm/var`` is logged both ways).
METRIC_NAMES = [column for column, _ in (*LOSS, *VARIANCE, *QUALITY)]
#: Tiles as one HTML block that wraps on a narrow page: st.metric's large digits were
#: cut off ("600 o…") seven to a row.
_TILE = (
    '<div class="spherescope-tile" style="min-width:7.5rem;flex:1 0 auto">'
    '<div style="font-size:0.85rem;opacity:0.7">{label}</div>'
    '<div style="font-size:1.5rem;font-weight:600;white-space:nowrap">{value}</div></div>'
)
# A tile never shrinks below its value (``flex: 1 0 auto``): with a zero basis a long
# value ("12,000 of 20,000") ran under the next tile instead of wrapping the row.

_ROW = "display:flex;flex-wrap:wrap;gap:1rem"


@dataclass(frozen=True)
class Progress:
    """Where the run is: its step, its total when known, steps per second, seconds left."""

    step: int
    total: int | None
    rate: float | None
    eta: float | None

    @property
    def text(self) -> str:
        total = f" of {self.total:,}" if self.total else ""
        return f"step {self.step:,}{total}"


def progress(record: Any, now: float | None = None) -> Progress:
    step = int(record.progress_step or 0)
    total = int(record.progress_total) if record.progress_total else None
    elapsed = data.elapsed_seconds(record, now)
    rate = step / elapsed if elapsed and step else None
    active = data.is_active(record.status)
    eta = (total - step) / rate if active and rate and total and total > step else None
    return Progress(step, total, rate, eta)


def _first_logged(row: pd.Series | None, choices: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    for column, label in choices:
        if row is not None and column in row and pd.notna(row[column]):
            return label, number(float(row[column]))
    return choices[0][1], "–"


def tiles(record: Any) -> None:
    """Draw the tiles of ``record`` (the page's one read of the run)."""
    finals = data.final_metrics([record.run_id], METRIC_NAMES)
    row = finals.iloc[0] if len(finals) else None
    where = progress(record)
    shown = [
        ("Status", record.status),
        ("Step", where.text.removeprefix("step ")),
        ("Rate", f"{number(where.rate)} steps/s" if where.rate else "–"),
        ("ETA", ui.format_seconds(where.eta) if where.eta else "–"),
        *(_first_logged(row, choices) for choices in (LOSS, VARIANCE, QUALITY)),
    ]
    running = data.running_evaluation(record.run_id) if data.is_active(record.status) else None
    if running is not None:  # a slow evaluation shows as such, not only as a chart
        since = ui.format_seconds(max(0.0, time.time() - running.submitted_at))
        shown.append(("Evaluation running", f"step {running.step:,} · {since}"))
    values = [escape(v) for _, v in shown]
    values[0] += trust_marker.marker_html(trust_marker.reasons(data.findings(record.run_id)))
    cells = "".join(
        _TILE.format(label=escape(k), value=v) for (k, _), v in zip(shown, values, strict=True)
    )
    st.markdown(
        f'<div class="spherescope-tiles" style="{_ROW}">{cells}</div>',
        unsafe_allow_html=True,
    )
    if record.progress_total or record.status == "finished":  # a bar means something
        st.progress(data.run_progress(record.status, where.step, where.total), text=where.text)
    device = record.device or record.run_info.get("device") or "–"
    host = record.host or "–"
    elapsed = ui.format_seconds(data.elapsed_seconds(record))
    info = f"Elapsed {elapsed} · device {device} · host {host}"
    left, right = st.columns([5, 1])
    left.caption(info)
    if data.is_active(record.status) and right.button(
        "Cancel run", key="run.cancel", icon=":material/stop_circle:"
    ):
        data.cancel_run(record.run_id)
        ui.flash(f"Cancel requested for {record.run_id}")
        st.rerun(scope="app")
    if record.status in ("failed", "lost"):
        st.error(
            f"The run {record.status}: {record.status_message or 'no message recorded'}",
            icon=":material/error:",
        )
    elif record.status_message:
        st.caption(f"Status: {record.status_message}")
