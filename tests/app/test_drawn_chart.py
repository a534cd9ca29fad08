"""A Compare chart as the live chart element receives it (``live_chart_wire.drawn_chart``)
is the chart Altair would have drawn: the same data-free spec and the same rows as
Altair's own conversion of the chart with its data (every cell to a record and back)."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd
import pytest

from app.charts.line_charts import group_band_chart, metric_lines, run_color_scale
from app.panels import live_chart_wire
from app.panels.live_chart_wire import LiveChart, Rows


def by_altair(chart: alt.TopLevelMixin, x: str, title: str) -> LiveChart:
    spec = chart.to_dict(validate=False)
    (records,) = spec["datasets"].values()
    note = (spec.get("usermeta") or {}).get("points_note")
    rows = Rows.of(pd.DataFrame.from_records(records))
    return LiveChart(live_chart_wire._data_free_spec(spec, x), rows, title, note)


def series(x: str, *, band: bool) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frames = []
    for run in ("alpha", "beta"):
        value = rng.random(300)
        frame = pd.DataFrame({x: np.arange(300) * 5, "value": value, "run": run})
        if band:
            frame = frame.assign(min=value - 0.1, max=value + 0.1)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    frame.loc[3, "value"] = np.nan
    if band:
        frame.loc[7, "max"] = np.inf  # neither JSON nor Vega-Lite reads it: as Altair, None
    return frame


def lines(x: str, *, band: bool, log_y: bool) -> alt.TopLevelMixin:
    return metric_lines(
        series(x, band=band),
        color="run",
        x=x,
        title="loss",
        y_title="loss",
        log_y=log_y,
        band=band,
        color_scale=run_color_scale(["a", "b"], {"a": "alpha", "b": "beta"}),
        total=900,
        legend_title="run",
    )


def groups() -> alt.TopLevelMixin:
    stats = pd.DataFrame(
        {
            "step": [0, 5, 10] * 2,
            "group": pd.Categorical(["sgd"] * 3 + ["adam"] * 3),
            "mean": [1.0, 0.5, 0.25, 1.2, 0.7, np.nan],
            "std": [0.1, 0.05, 0.0, 0.2, 0.1, np.nan],
            "runs": [3, 3, 3, 2, 2, 1],
        }
    )
    stats = stats.assign(lower=stats["mean"] - stats["std"], upper=stats["mean"] + stats["std"])
    return group_band_chart(stats, x="step", title="loss: mean ± std by optimizer")


@pytest.mark.parametrize(
    ("make", "x"),
    [
        (lambda: lines("step", band=True, log_y=True), "step"),
        (lambda: lines("step", band=False, log_y=False), "step"),
        (lambda: lines("time", band=True, log_y=False), "time"),
        (groups, "step"),
    ],
    ids=["band-log", "lines", "time", "groups"],
)
def test_drawn_chart_equals_altairs_conversion(make, x: str) -> None:
    chart = make()
    drawn = live_chart_wire.drawn_chart(chart, x, "loss")
    expected = by_altair(chart, x, "loss")
    assert drawn is not None
    assert json.loads(drawn.spec) == json.loads(expected.spec)
    assert drawn.table == expected.table
    assert json.loads(drawn.rows) == json.loads(expected.rows)
    assert drawn.note == expected.note


def test_a_chart_whose_layers_hold_their_own_rows_is_not_drawn_by_the_element() -> None:
    first = alt.Chart(pd.DataFrame({"step": [0, 1], "value": [1.0, 2.0]})).mark_line()
    second = alt.Chart(pd.DataFrame({"step": [0, 1], "value": [3.0, 4.0]})).mark_point()
    chart = alt.layer(first.encode(x="step:Q", y="value:Q"), second.encode(x="step:Q"))
    assert live_chart_wire.drawn_chart(chart, "step", "two") is None
