"""db.experiment_runs: which runs a report counts, and the training statistics."""

from __future__ import annotations

import math

import pytest

from db.experiment_runs import (
    BY_CONFIG,
    BY_TAG,
    experiment_runs,
    experiment_values,
    training_statistic,
)
from db.store import RunStore


def _run(store: RunStore, variant: str, seed: int, values: list[float], status="finished"):
    config = {"training": {"seed": seed, "steps": len(values)}}
    tags = ["repro:toy", f"variant:{variant}"]
    run_id = store.create_run(config, f"{variant} {seed}", tags=tags, status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step, value in enumerate(values, 1):
            tracker.track_many({"norm/var": value}, step)
        tracker.track_eval({"recall@1": values[-1] / 10}, len(values))
    if status != "running":
        store.set_status(run_id, status)
    return run_id


def test_newest_finished_run_per_variant_and_seed(store: RunStore) -> None:
    old = _run(store, "a", 0, [1.0] * 4)
    new = _run(store, "a", 0, [2.0] * 4)
    _run(store, "a", 0, [3.0] * 4, status="running")  # unfinished: never counted
    other = _run(store, "b", 0, [1.0] * 4)
    store.create_run({}, "untagged")
    runs = experiment_runs(store, "repro:toy", "variant:")
    assert set(runs["run_id"]) == {new, other}
    assert old not in set(runs["run_id"])
    assert runs.set_index("run_id").loc[new, "steps"] == 4


def test_last_quarter_mean_run_median_and_nan_steps(store: RunStore) -> None:
    run_id = _run(store, "a", 0, [100.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, float("nan")])
    mean = training_statistic(store, [run_id], ["norm/var"], 0.25)  # steps 7, 8 (NaN left out)
    assert mean["value"].tolist() == [6.0]
    median = training_statistic(store, [run_id], ["norm/var"], 1.0, "median")
    assert median["value"].tolist() == [4.0]
    with pytest.raises(ValueError, match="aggregate"):
        training_statistic(store, [run_id], ["norm/var"], 1.0, "max; DROP TABLE x")


def test_values_frame_has_one_column_per_metric(store: RunStore) -> None:
    run_id = _run(store, "a", 1, [4.0, 4.0, 2.0, 2.0])
    runs = experiment_runs(store, "repro:toy", "variant:")
    statistics = [("train_mean:norm/var", "norm/var", 0.5, "mean")]
    values = experiment_values(store, runs, ["recall@1", "never"], statistics)
    row = values.set_index("run_id").loc[run_id]
    assert row["recall@1"] == pytest.approx(0.2)
    assert row["train_mean:norm/var"] == 2.0
    assert math.isnan(row["never"])


def test_untagged_runs_count_when_the_callers_match_finds_their_config(store: RunStore) -> None:
    """A preset loaded into the Launch form runs untagged: it counted for nothing."""
    tagged = _run(store, "a", 0, [1.0] * 4)
    loaded = store.create_run({"training": {"seed": 1}, "lr": 0.5}, "from the form")
    store.set_status(loaded, "running")
    store.set_status(loaded, "finished")
    other = store.create_run({"training": {"seed": 2}, "lr": 9.0}, "something else")
    store.set_status(other, "running")
    store.set_status(other, "finished")

    def match(config: dict) -> str | None:
        return "b" if config.get("lr") == 0.5 else None

    assert set(experiment_runs(store, "repro:toy", "variant:")["run_id"]) == {tagged}
    runs = experiment_runs(store, "repro:toy", "variant:", match).set_index("run_id")
    assert set(runs.index) == {tagged, loaded}
    assert runs.loc[loaded, ["variant", "seed", "found_by"]].tolist() == ["b", 1, BY_CONFIG]
    assert runs.loc[tagged, "found_by"] == BY_TAG
