"""The SEC paper's final table (Compare page), its columns taken from the catalogue."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from app.charts.formats import column_decimals
from app.data.reads import final_metrics
from app.data.tables import config_values
from sphere_engine.catalogue import PAPER_TABLE, PAPER_TABLE_OPTIONAL, column_key, find


def _columns(optional: bool = False) -> list[tuple[str, str, bool, bool]]:
    """(column key, header, higher is better, shown in percent) per paper column (with
    ``optional``: also the catalogue's optional columns, e.g. TAR@FAR)."""
    result = []
    for source, key in PAPER_TABLE + (PAPER_TABLE_OPTIONAL if optional else ()):
        metric = find(key, source)
        assert metric is not None, key  # tests/sphere_engine/test_catalogue.py checks this
        higher = bool(metric.higher_is_better)
        header = metric.header(source)
        if metric.is_family:  # the member's own part: "TAR@FAR" → "TAR@FAR=1e-3"
            header += key.removeprefix(metric.key.rstrip("=")) if "=" in key else ""
        result.append((column_key(source, key), header, higher, metric.unit == "fraction"))
    return result


def paper_table(run_ids: Sequence[str]) -> pd.DataFrame:
    """Final metrics in the SEC paper's layout: run, NMI, F1, R@1, MAP@R, norm var
    (test set). Fractions (retrieval, clustering) are shown in percent, as in the paper."""
    columns = _columns(optional=True)
    finals = final_metrics(tuple(run_ids), [c for c, _, _, _ in columns])
    required = len(PAPER_TABLE)  # optional columns only when some run logged them
    columns = columns[:required] + [
        c for c in columns[required:] if c[0] in finals and finals[c[0]].notna().any()
    ]
    headers = ["run_id", "run", *[h for _, h, _, _ in columns]]
    if finals.empty:
        return pd.DataFrame(columns=headers)
    table = pd.DataFrame({"run_id": finals["run_id"], "run": finals["name"]})
    for column, title, _, percent in columns:
        values = pd.to_numeric(finals[column], errors="coerce") if column in finals else np.nan
        table[title] = values * 100.0 if percent else values
    return table[headers].reset_index(drop=True)


def paper_best() -> dict[str, bool]:
    """Column header → higher is better, for highlighting the best value per column."""
    return {title: higher for _, title, higher, _ in _columns(optional=True)}


def grouped_paper_table(run_ids: Sequence[str], key: str) -> pd.DataFrame:
    """The paper table with one row per value of config ``key``: each cell
    "mean ± std (n)" over the group's runs (e.g. seeds), as papers report results.

    Columns: the group ("key=value"), then the paper's headers. Decimals per column
    are chosen so the groups' means are told apart (``charts.formats``).
    """
    table = paper_table(run_ids)
    headers = [h for _, h, _, _ in _columns()]
    if table.empty:
        return pd.DataFrame(columns=[key, *headers])
    values = config_values(list(table["run_id"]), key)
    table = table.assign(group=table["run_id"].map(values).map(lambda v: f"{key}={v}"))
    stats = table.groupby("group", sort=True)[headers].agg(["mean", "std", "count"])
    result = pd.DataFrame({key: stats.index})
    for header in headers:
        mean, std, count = (stats[(header, s)].to_numpy() for s in ("mean", "std", "count"))
        decimals = column_decimals(mean)
        result[header] = [
            "–" if n == 0 else f"{m:.{decimals}f} ± {0.0 if np.isnan(s) else s:.{decimals}f} ({n})"
            for m, s, n in zip(mean, std, count, strict=True)
        ]
    return result


def final_by_config(run_ids: Sequence[str], key: str, header: str) -> pd.DataFrame:
    """A final paper metric against config ``key``: one row per value of the key with
    value (as text), x (the value as a number where it is one), mean, std (0 for one
    run), lower, upper, runs — error bars over the other keys (seeds)."""
    table = paper_table(run_ids)
    columns = ["value", "x", "mean", "std", "lower", "upper", "runs"]
    if table.empty or header not in table:
        return pd.DataFrame(columns=columns)
    values = config_values(list(table["run_id"]), key)
    frame = table.assign(value=table["run_id"].map(values))[["value", header]].dropna()
    stats = frame.groupby("value", sort=False)[header].agg(["mean", "std", "count"]).reset_index()
    stats = stats.rename(columns={"count": "runs"})
    stats["std"] = stats["std"].fillna(0.0)
    stats["x"] = pd.to_numeric(stats["value"], errors="coerce")
    stats["lower"] = stats["mean"] - stats["std"]
    stats["upper"] = stats["mean"] + stats["std"]
    return stats.sort_values(["x", "value"]).reset_index(drop=True)[columns]
