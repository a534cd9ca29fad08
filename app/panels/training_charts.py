"""The Run page's charts, built so that watching a live run is cheap.

A chart is a data-free Vega-Lite spec, built once per (kind, x axis, scale, legend,
title) and kept for the life of the process, plus its rows, both as JSON: the page's
live chart element (``app.panels.live_charts``) keeps one Vega view per chart and, when
only the rows changed, swaps the dataset ``DATASET`` inside it instead of embedding the
chart anew. Altair's ``to_dict`` runs once per spec, not once per chart and refresh.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from app import data
from app.charts.base import limit
from app.charts.heatmap import norm_distribution_heatmap
from app.charts.line_charts import (
    band_rows,
    has_band,
    line_rows,
    metric_lines,
    norm_band_chart,
    sample_norm_chart,
)
from app.charts.similarity_heatmap import similarity_distribution_heatmap
from app.panels.live_chart_wire import LiveChart, data_free, live_chart
from app.transforms import downsample, histogram_cells, time_at_steps
from sphere_engine.catalogue import ChartGroup, chart_groups, group_keys
from sphere_engine.catalogue import similarity_histogram as similarity

#: Steps per bin in the norm-distribution heatmap, as a share of the points per series:
#: its cells are bins × steps, the most rows of any chart, and a live refresh sends and
#: redraws them all (the heatmap was a quarter of the browser's time on a live page).
HEATMAP_STEP_SHARE = 0.5


def _wide(part: pd.DataFrame, x: str) -> pd.DataFrame:
    """One row per step, one column per metric name, and the step's ``x`` (a pivot,
    not ``pivot_table``: its grouping machinery was a tenth of a live refresh)."""
    last = part.drop_duplicates(["step", "name"], keep="last")
    wide = last.pivot(index="step", columns="name", values="value")
    if x != "step":
        wide = wide.join(part.drop_duplicates("step", keep="last").set_index("step")[x])
    wide = wide.reset_index()
    wide.columns.name = None
    return wide


def _empty(*columns: str) -> pd.DataFrame:
    return pd.DataFrame({column: pd.Series(dtype=float) for column in columns})


# ----------------------------------------------------------------------------- specs
# Cached per argument tuple: a handful of specs per page and axis choice.


@functools.cache
def line_spec(
    x: str,
    title: str,
    y_title: str,
    log_y: bool,
    legend_title: str,
    legend: bool,
    band: bool = False,
) -> str:
    chart = metric_lines(
        _empty(x, "value", "min", "max").assign(name=pd.Series(dtype=str)),
        x=x,
        title=title,
        y_title=y_title,
        log_y=log_y,
        band=band,
        legend_title=legend_title,
        legend=legend,
    )
    return data_free(chart, x)


@functools.cache
def band_spec(x: str, title: str) -> str:
    return data_free(norm_band_chart(_empty(x, "mean"), x=x, title=title), x)


@functools.cache
def samples_spec(x: str, title: str) -> str:
    empty = _empty(x, "norm").assign(sample=pd.Series(dtype=str))
    return data_free(sample_norm_chart(empty, x=x, title=title), x)


@functools.cache
def heatmap_spec(x: str, title: str, log_color: bool) -> str:
    empty = _empty("x0", "x1", "lower", "upper", "fraction")
    return data_free(norm_distribution_heatmap(empty, x=x, title=title, log_color=log_color), x)


@functools.cache
def similarity_heatmap_spec(x: str, title: str) -> str:
    empty = _empty("x0", "x1", "lower", "upper", "fraction")
    return data_free(similarity_distribution_heatmap(empty, x=x, title=title), x)


def _similarity_cells(part: pd.DataFrame, keys: list[str], x: str) -> pd.DataFrame:
    """The cells of the one ``mining/*_sim_hist/`` family whose keys ``keys`` are."""
    prefix = next((p for p in similarity.PREFIXES if keys and keys[0].startswith(p)), "")
    return histogram_cells(
        part,
        x=x,
        index_of=lambda key: similarity.bin_index(key, prefix),
        edges_of=similarity.bin_edges,
    )


# ----------------------------------------------------------------------------- charts


@functools.lru_cache(maxsize=64)
def chart_plan(logged: frozenset[str]) -> tuple[tuple[ChartGroup, list[str]], ...]:
    """The catalogue's chart groups drawn for a run that logged the keys ``logged``,
    each with its keys. Cached: its catalogue lookups took an eighth of a live
    refresh's server time, for the same answer every time (a run logs the same names
    all along)."""
    plan = []
    for group in chart_groups():
        if group.requires and not logged.intersection(group.requires):
            continue
        keys = group_keys(group, logged)
        if group.per_key:  # small multiples: a chart and a y scale per key
            plan += [(split_group(group, key), [key]) for key in keys]
        else:
            plan.append((group, keys))
    return tuple(plan)


def split_group(group: ChartGroup, key: str) -> ChartGroup:
    """The chart of one key of a ``per_key`` group: its own id and title."""
    return dataclasses.replace(
        group, id=f"{group.id}:{key}", title=f"{group.title}: {key}", per_key=True
    )


def drop_all_zero(part: pd.DataFrame) -> pd.DataFrame:
    """``part`` without the series that are zero at every step (a regulariser term with
    η = 0 draws a flat line at 0 that stretches the axis of the terms that move), unless
    every series is."""
    if part.empty:
        return part
    # in numpy: a Python function per group and column was a quarter of a refresh
    names = part["name"].to_numpy()
    moved = (np.nan_to_num(part[_extremes(part)].to_numpy(float)) != 0).any(axis=1)
    zero = [name for name in pd.unique(names) if not moved[names == name].any()]
    if not zero or len(zero) == len(pd.unique(names)):
        return part
    return part[~part["name"].isin(zero)]


def _extremes(part: pd.DataFrame) -> list[str]:
    """The columns that say whether a series moved: a downsampled bucket's last value
    can be 0 while its min or max is not (a loss active on some steps of each bucket:
    judged on ``value`` alone, a live run's loss charts vanished at step 11k)."""
    return ["value", *(c for c in ("min", "max") if c in part)]


def _zero_everywhere(values: pd.Series) -> bool:
    return bool((values.fillna(0) == 0).all())


def _all_zero(part: pd.DataFrame) -> bool:
    return all(_zero_everywhere(part[column]) for column in _extremes(part))


def lines(
    part: pd.DataFrame,
    *,
    x: str,
    title: str,
    total: int | None,
    log_y: bool,
    y_title: str = "value",
    legend_title: str = "name",
) -> LiveChart:
    """Lines of ``value`` over ``x``, one per ``name`` (``metric_lines``), each with its
    buckets' min–max band where ``part`` was downsampled (``has_band``): a bucket's
    last value alone drew a loss active on a few steps per bucket as a flat 0."""
    band = has_band(part)
    frame, note = line_rows(part, x=x, log_y=log_y, band=band, total=total)
    legend = frame["name"].nunique() > 1  # one series is named by the title
    spec = line_spec(x, title, y_title, log_y, legend_title, legend, band)
    columns = [x, "name", "value", *(["min", "max"] if band else [])]
    return live_chart(spec, frame[columns], title, note)


@dataclass(frozen=True)
class _GroupInputs:
    """What a group's chart is drawn from: the run's logged ``series`` (long: step,
    name, value), the page's chart controls and ``points`` per series."""

    group: ChartGroup
    keys: list[str]
    run_id: str
    series: pd.DataFrame
    totals: data.Totals
    log_y: bool
    log_color: bool
    x: str
    points: int
    by_name: dict[str, pd.DataFrame] | None = None

    @property
    def part(self) -> pd.DataFrame:
        """The rows of the group's keys (from ``by_name``, the series split once per
        build, when given: a scan of the whole series per chart was a tenth of a
        refresh)."""
        if self.by_name is None:
            return self.series[self.series["name"].isin(self.keys)]
        parts = [self.by_name[key] for key in self.keys if key in self.by_name]
        if not parts:
            return self.series.iloc[:0]
        return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)

    @property
    def total(self) -> int:
        """The points the group's keys have logged in all."""
        return data.points_total(self.totals, self.keys)

    @property
    def heatmap_steps(self) -> int:
        return max(int(self.points * HEATMAP_STEP_SHARE), 2)


def split_by_name(series: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``series``'s rows per metric name (``group_chart``'s ``by_name``)."""
    if series.empty:
        return {}
    return {str(name): rows for name, rows in series.groupby("name", sort=False)}


def _sample_norms_chart(inputs: _GroupInputs) -> LiveChart | None:
    x, title = inputs.x, inputs.group.title
    norms, total = data.sample_norms(inputs.run_id, max_points=inputs.points)
    if norms.empty:
        return None
    if x != "step":
        at = time_at_steps(norms.assign(run_id=inputs.run_id), inputs.series, x)
        norms = norms.assign(**{x: at})
    frame, note = limit(norms, ["sample"], x, total)
    frame = frame.assign(sample=frame["sample"].astype(str))
    return live_chart(samples_spec(x, title), frame[[x, "sample", "norm"]], title, note)


def _heatmap_chart(inputs: _GroupInputs) -> LiveChart | None:
    cells = histogram_cells(downsample(inputs.part, inputs.heatmap_steps), x=inputs.x)
    if cells.empty:
        return None
    frame, note = limit(cells, [], "x0", inputs.total)
    spec = heatmap_spec(inputs.x, inputs.group.title, inputs.log_color)
    return live_chart(spec, frame.drop(columns="run_id"), inputs.group.title, note)


def _similarity_heatmap_chart(inputs: _GroupInputs) -> LiveChart | None:
    part = downsample(inputs.part, inputs.heatmap_steps)
    cells = _similarity_cells(part, inputs.keys, inputs.x)
    if cells.empty:
        return None
    frame, note = limit(cells, [], "x0", inputs.total)
    spec = similarity_heatmap_spec(inputs.x, inputs.group.title)
    return live_chart(spec, frame.drop(columns="run_id"), inputs.group.title, note)


def _band_chart(inputs: _GroupInputs) -> LiveChart | None:
    x, part = inputs.x, inputs.part
    if "norm/mean" not in set(part["name"]):
        return None
    per_metric = inputs.total // max(part["name"].nunique(), 1)
    renamed = {f"norm/{k}": k for k in ("mean", "std", "min", "max")}
    frame, note = band_rows(_wide(part, x).rename(columns=renamed), x=x, total=per_metric)
    columns = [x, "mean", "std", "min", "max", "lower", "upper"]
    return live_chart(band_spec(x, inputs.group.title), frame[columns], inputs.group.title, note)


def _lines_chart(inputs: _GroupInputs) -> LiveChart | None:
    group = inputs.group
    part = drop_all_zero(inputs.part)
    if part.empty or (group.per_key and _all_zero(part)):  # a term that is 0 at every step
        return None
    keys = [k for k in inputs.keys if k in set(part["name"])]
    single = len(keys) == 1 and group.y_title == "value"
    return lines(
        part,
        x=inputs.x,
        title=group.title,
        total=inputs.total,
        log_y=inputs.log_y and group.log_scale,
        y_title=keys[0] if single else group.y_title,
        legend_title=group.legend_title or "name",
    )


#: Each ``ChartGroup.kind``'s chart.
_CHARTS: dict[str, Callable[[_GroupInputs], LiveChart | None]] = {
    "lines": _lines_chart,
    "band": _band_chart,
    "sample_norms": _sample_norms_chart,
    "heatmap": _heatmap_chart,
    "similarity_heatmap": _similarity_heatmap_chart,
}


def group_chart(
    group: ChartGroup,
    keys: list[str],
    run_id: str,
    series: pd.DataFrame,
    totals: data.Totals,
    *,
    log_y: bool,
    log_color: bool,
    x: str,
    points: int,
    by_name: dict[str, pd.DataFrame] | None = None,
) -> LiveChart | None:
    """One catalogue group's chart, or None when it has nothing to draw (``points``:
    steps per tracked sample; ``by_name``: ``split_by_name(series)``, when the caller
    draws several groups of the same series)."""
    inputs = _GroupInputs(group, keys, run_id, series, totals, log_y, log_color, x, points, by_name)
    return _CHARTS[group.kind](inputs)
