"""Reading the runs of a declared reproduction experiment out of the store.

A run belongs to an experiment by its tags (``repro:NAME`` and ``variant:LABEL``, see
``worker.reproduce``) or, untagged, when the caller's ``match`` finds its config equal
to a variant's (``sphere_engine.experiments.matching``: a preset loaded into the Launch
form, a seed sweep of it). Per (variant, seed) the newest finished run counts, so
running an experiment again replaces its numbers and a partial rerun keeps the rest.
Imports neither torch nor the engine: the dashboard uses it as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from db.queries import final_metrics, list_runs
from db.reader import query_arrow
from db.schema import SCALARS
from db.selection import check_names, in_list
from db.store import RunStore

RUN_COLUMNS = [
    "run_id", "name", "variant", "seed", "steps", "found_by", "created_at", "duration_s",
    "device", "config",
]  # fmt: skip
#: ``found_by``: how a run was recognised as the experiment's.
BY_TAG = "tag"
BY_CONFIG = "config"


def experiment_runs(
    store: RunStore,
    experiment_tag: str,
    variant_prefix: str,
    match: Callable[[dict[str, Any]], str | None] | None = None,
) -> pd.DataFrame:
    """The newest finished run per (variant, seed) of the runs tagged ``experiment_tag``
    and, with ``match`` (stored config -> variant label or None), of the untagged runs
    whose config it matches.

    Columns ``RUN_COLUMNS``: the variant label (from the tag starting with
    ``variant_prefix``, else from ``match``), the seed and steps from the run's config,
    and ``found_by`` (``BY_TAG`` or ``BY_CONFIG``).
    """
    runs = list_runs(store, status="finished")
    rows = []
    for run in runs.itertuples(index=False):
        training = (run.config or {}).get("training", {})
        if "seed" not in training:
            continue
        variant, found_by = _variant(run, experiment_tag, variant_prefix, match)
        if variant is None:
            continue
        rows.append(
            {
                "run_id": run.run_id,
                "name": run.name,
                "variant": variant,
                "seed": int(training["seed"]),
                "steps": int(training.get("steps", 0)),
                "found_by": found_by,
                "created_at": run.created_at,
                "duration_s": (run.finished_at - run.started_at).total_seconds()
                if pd.notna(run.started_at) and pd.notna(run.finished_at)
                else float("nan"),
                "device": run.device,
                "config": run.config,
            }
        )
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
    frame = frame.sort_values("created_at", ascending=False, kind="stable")
    return frame.drop_duplicates(["variant", "seed"]).reset_index(drop=True)


def _variant(
    run: Any,
    experiment_tag: str,
    variant_prefix: str,
    match: Callable[[dict[str, Any]], str | None] | None,
) -> tuple[str | None, str]:
    """(variant label, how it was found) of one listed run; None when it is not one."""
    tags = list(run.tags)
    if experiment_tag in tags:
        variants = [t[len(variant_prefix) :] for t in tags if t.startswith(variant_prefix)]
        return (variants[0] if variants else None), BY_TAG
    # another experiment's run counts too when its config is one of this one's variants
    return (match(run.config or {}) if match else None), BY_CONFIG


_AGGREGATES = {"mean": "avg", "median": "median"}  # SQL text only from this table


def training_statistic(
    store: RunStore,
    run_ids: Iterable[str],
    names: Iterable[str],
    fraction: float,
    aggregate: str = "mean",
) -> pd.DataFrame:
    """``aggregate`` ("mean" or "median") of each per-step scalar over the last
    ``fraction`` of each run's steps (NaN steps left out): columns run_id, name, value."""
    runs = list(dict.fromkeys(run_ids))
    wanted = check_names(list(names)) or []
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction: {fraction!r} must be in (0, 1]")
    if aggregate not in _AGGREGATES:
        raise ValueError(f"aggregate: {aggregate!r} is not allowed; choose mean or median")
    if not runs or not wanted:
        return pd.DataFrame(columns=["run_id", "name", "value"])
    where, params = in_list("s.name", "n", wanted)
    sql = f"""
    WITH last AS (SELECT run_id, max(step) AS last_step FROM scalars GROUP BY run_id)
    SELECT s.run_id, s.name, {_AGGREGATES[aggregate]}(s.value) AS value
    FROM scalars s JOIN last USING (run_id)
    WHERE {where} AND NOT isnan(s.value)
      AND s.step > last.last_step * (1 - $fraction)
    GROUP BY s.run_id, s.name
    """
    params["fraction"] = float(fraction)
    return query_arrow(store, {"scalars": (SCALARS, runs)}, sql, params).to_pandas()


def experiment_values(
    store: RunStore,
    runs: pd.DataFrame,
    eval_names: Iterable[str],
    statistics: Iterable[tuple[str, str, float, str]],
) -> pd.DataFrame:
    """``runs`` (from ``experiment_runs``) with one column per metric: the final
    evaluation value of each of ``eval_names``, and per training statistic
    (column, scalar name, fraction, aggregate) that statistic (``training_statistic``).
    Missing values are NaN."""
    frame = runs.drop(columns=["config", "name"], errors="ignore").copy()
    ids = list(frame["run_id"])
    evals = list(eval_names)
    if evals:
        finals = final_metrics(store, ids, evals) if ids else pd.DataFrame(columns=evals)
        for name in evals:
            frame[name] = finals[name].to_numpy(dtype=float) if ids else np.array([])
    for column, name, fraction, aggregate in statistics:
        found = training_statistic(store, ids, [name], fraction, aggregate)
        frame[column] = frame["run_id"].map(found.set_index("run_id")["value"]).astype(float)
    return frame
