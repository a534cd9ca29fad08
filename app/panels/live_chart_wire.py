"""A Run-page chart as the live chart element receives it: a data-free Vega-Lite spec
reading the one dataset ``DATASET`` (built once per spec), and its rows, all of them as
JSON or, to a tab that holds earlier rows, only what changed (``rows_change``).

The element (``app.panels.live_charts``) keeps one Vega view per chart and, when only
the rows changed, inserts the new rows into the view and removes the dropped ones (a
Vega changeset) instead of embedding the chart anew or replacing its whole dataset.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

#: The one dataset of every Run-page chart (a fixed name keeps the spec fixed).
DATASET = "rows"
#: The name of each chart's scale-bound x zoom (``charts.base.zoomable``): the live
#: chart element links the zoom of every chart through its ``<ZOOM>_<x field>`` signal.
ZOOM = "zoom"


@dataclass(frozen=True)
class Rows:
    """A chart's rows: its field names and one tuple of values per row (missing values
    as None), in the order a tab holds them."""

    fields: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]

    @staticmethod
    def of(frame: pd.DataFrame) -> Rows:
        columns = _columns(frame)
        return Rows(tuple(columns), tuple(zip(*columns.values(), strict=True)))

    def json(self, values: tuple[tuple[Any, ...], ...] | None = None) -> str:
        """``values`` (default: all rows) as columns, ``{field: [values]}`` (half the
        bytes of records; the chart element makes rows of them): exact floats (their
        shortest repr), missing values as null."""
        values = self.values if values is None else values
        columns = zip(*values, strict=True) if values else [()] * len(self.fields)
        table = {field: list(column) for field, column in zip(self.fields, columns, strict=True)}
        return json.dumps(table, allow_nan=False, separators=(",", ":"))


@dataclass(frozen=True)
class LiveChart:
    """One chart: its spec, its rows (``Rows``; as JSON, ``rows``), and its title and
    "N of M points" note for the page's captions."""

    spec: str
    table: Rows
    title: str
    note: str | None

    @functools.cached_property
    def rows(self) -> str:
        """All the rows as JSON: built when a tab needs them all (a script run, a new
        spec, most rows changed), not on every poll."""
        return self.table.json()


def live_chart(spec: str, frame: pd.DataFrame, title: str, note: str | None) -> LiveChart:
    return LiveChart(spec, Rows.of(frame), title, note)


def rows_change(held: Rows | None, chart: LiveChart) -> tuple[str, Rows]:
    """The members of a poll's answer that turn the rows a tab holds (``held``; None:
    none) into ``chart``'s, and the rows the tab then holds, in its order.

    Either ``"rows"``: all of them (nothing held, other fields, or most rows changed:
    a re-downsampled series), or ``"drop"``: the positions of the held rows that are
    gone and ``"add"``: the new rows, which the tab appends. While a run trains, a
    poll's change is the few rows logged since: sending (and the browser parsing,
    ingesting and laying out) every row of every chart each second was most of what
    watching cost. Rows are compared as values, in any order (a chart's marks order
    themselves by x); "" when nothing changed."""
    new = chart.table
    if held is not None and (held is new or held == new):
        return "", new
    if held is None or held.fields != new.fields:
        return f',"rows":{chart.rows}', new
    wanted = Counter(new.values)
    dropped, kept = [], []
    for index, row in enumerate(held.values):
        if wanted[row] > 0:
            wanted[row] -= 1
            kept.append(row)
        else:
            dropped.append(index)
    added = []
    for row in new.values:  # the rows not held, in the chart's order
        if wanted[row] > 0:
            wanted[row] -= 1
            added.append(row)
    if not dropped and not added:
        return "", held
    if len(dropped) + len(added) >= len(new.values):  # cheaper whole
        return f',"rows":{chart.rows}', new
    members = f',"drop":{json.dumps(dropped)},"add":{new.json(tuple(added))}'
    return members, Rows(new.fields, (*kept, *added))


def _columns(frame: pd.DataFrame) -> dict[str, list[Any]]:
    """``frame``'s columns as lists of plain values, missing values as None (through
    numpy: pandas' per-column lookups and checks were a sixth of a poll's build)."""
    columns = {}
    for name, column in frame.items():
        values = column.to_numpy()
        if values.dtype.kind == "f":
            missing = ~np.isfinite(values)  # JSON has no NaN or infinity (nor has Altair)
            if missing.any():
                values = values.astype(object)
                values[missing] = None
            listed = values.tolist()
        elif values.dtype.kind in "iub":
            listed = values.tolist()
        else:  # text (or anything else): pandas' own values, missing ones as None
            values = column.to_numpy(dtype=object)
            missing = column.isna().to_numpy()
            if missing.any():
                values[missing] = None
            listed = values.tolist()
        columns[str(name)] = listed
    return columns


def data_free(chart: alt.TopLevelMixin, x: str) -> str:
    """``chart``'s spec (validated: this runs once per spec) reading ``DATASET``, for
    the x axis ``x``, as JSON."""
    return _data_free_spec(chart.to_dict(), x)


def drawn_chart(chart: alt.TopLevelMixin, x: str, title: str) -> LiveChart | None:
    """A chart built with its rows (``charts.metric_lines``, ...) as a ``LiveChart`` for
    the chart element, which links the x zoom of all its charts and keeps it in the URL
    (``?zoom=``); None for a chart over several datasets."""
    frame = _only_frame(chart)
    if frame is None:
        return None
    # The spec is built over the named dataset and the rows straight from the frame:
    # Altair's own conversion (every cell to a record, then read back into a frame) was
    # most of the Compare page's server time.
    # (The chart's own rows are swapped out for the call rather than the chart copied:
    # a layered chart's copy deep-copies its layers, more than the conversion saved.)
    chart.data = alt.Data(name=DATASET)
    try:
        spec = chart.to_dict(validate=False)
    finally:
        chart.data = frame
    note = (spec.get("usermeta") or {}).get("points_note")
    return LiveChart(_data_free_spec(spec, x), Rows.of(_plain(frame)), title, note)


def _only_frame(chart: alt.TopLevelMixin) -> pd.DataFrame | None:
    """The one frame a chart draws, held at its top (``alt.layer`` lifts the rows its
    layers share); None when a layer has rows of its own."""
    if not isinstance(chart.data, pd.DataFrame):
        return None
    for part in getattr(chart, "layer", None) or ():
        if part.data is not alt.Undefined:
            return None
    return chart.data


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with what Vega-Lite cannot read as it is (dates, categories, nullable
    types) converted as Altair converts it; numbers and text pass as they are."""
    if all(_plain_dtype(dtype) for dtype in frame.dtypes):
        return frame
    return alt.utils.sanitize_pandas_dataframe(frame)


def _plain_dtype(dtype: Any) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind in "fiubO"
    return isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype))


def _data_free_spec(spec: dict[str, Any], x: str) -> str:
    spec = dict(spec)
    spec.pop("datasets", None)
    # The points note travels as a caption. A canvas redraws new rows for a fraction of
    # what an SVG costs (no DOM node per mark and path to rebuild and lay out).
    spec["usermeta"] = {"embedOptions": {"renderer": "canvas"}}
    # Vega-Lite gives every mark an ARIA description (a string of formatted values per
    # row, built on every refresh by Vega's expression interpreter); a canvas has no
    # element per mark to carry it, so it was computed for nothing.
    spec["config"] = {**spec.get("config", {}), "aria": False}
    for part in [spec, *spec.get("layer", [])]:
        part.pop("data", None)
        if x != "clock":  # a wall-clock x is epoch milliseconds: keep its formatted date
            _tooltip_from_data(part)
            # the tooltip's text columns (charts.base.number_text_transform) would be
            # computed per row on every refresh: the element formats the hovered row
            kept = [t for t in part.get("transform", []) if not _number_text(t)]
            if kept:
                part["transform"] = kept
            else:
                part.pop("transform", None)
    spec["data"] = {"name": DATASET}
    for param in spec.get("params", []):
        if param.get("bind") == "scales":  # ``charts.base.zoomable``'s, named for linking
            param["name"] = ZOOM
    return json.dumps(spec)


def _number_text(transform: dict[str, Any]) -> bool:
    return "calculate" in transform and str(transform.get("as", "")).endswith("_text")


def _tooltip_from_data(part: dict[str, Any]) -> None:
    """Hover shows the hovered row's fields instead of an encoded tooltip.

    An encoded tooltip is an object of formatted values that Vega's expression
    interpreter (Streamlit's CSP-safe Vega evaluates expressions by walking their
    syntax tree) builds for every row of every chart on every live refresh, hovered or
    not: with the number formats behind it, a third of the browser's time on a live
    Run page. The row itself costs nothing until it is shown (x, name, value)."""
    encoding = part.get("encoding") or {}
    if encoding.pop("tooltip", None) is None or "mark" not in part:
        return
    mark = part["mark"]
    part["mark"] = {**({"type": mark} if isinstance(mark, str) else mark)}
    part["mark"]["tooltip"] = {"content": "data"}
