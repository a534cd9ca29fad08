"""The dashboard's read API: runs table, names, final metrics, config diff, snapshots,
export."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from db import queries


def _trained(store, config, name, *, lr, steps, recall):
    config = {**config, "optimizer": {**config["optimizer"], "lr": lr}}
    run_id = store.create_run(config, name)
    with store.tracker(run_id, flush_interval=3600) as tracker:
        for step in range(steps):
            tracker.track_many({"loss/total": 1.0 / (step + 1), "norm/var": 0.1 * step}, step)
        tracker.track_eval({"eval/recall@1": recall / 2, "eval/map": 0.5}, steps // 2)
        tracker.track_eval({"eval/recall@1": recall}, steps)
    return run_id


def test_list_runs_frame(store, config):
    first = store.create_run(config, "one", tags=["x"])
    second = store.create_run(config, "two", status="running")
    store.heartbeat(second, 5, 10)
    frame = queries.list_runs(store)
    assert list(frame.columns) == queries.RUN_COLUMNS
    assert frame["run_id"].tolist() == [second, first]
    assert frame["tags"].tolist() == [[], ["x"]]
    assert frame["config"].iloc[0] == config
    assert str(frame["created_at"].dtype) == "datetime64[us, UTC]"
    assert frame["progress_step"].tolist() == [5, pd.NA]
    assert pd.isna(frame["started_at"].iloc[1]) and not pd.isna(frame["started_at"].iloc[0])
    assert queries.list_runs(store, status="running")["run_id"].tolist() == [second]


def test_empty_store_gives_empty_frames(store):
    frame = queries.list_runs(store)
    assert frame.empty and list(frame.columns) == queries.RUN_COLUMNS
    assert queries.metric_names(store, []) == []
    assert queries.final_metrics(store, []).columns.tolist() == ["run_id", "name"]
    assert queries.config_diff(store, []).columns.tolist() == ["key"]
    assert queries.eval_series(store, []).columns.tolist() == ["run_id", "step", "name", "value"]


def test_run_without_values_gives_empty_frames(store, config):
    run_id = store.create_run(config)
    assert queries.metric_names(store, [run_id]) == []
    assert queries.eval_names(store, [run_id]) == []
    assert queries.snapshot_steps(store, run_id) == []
    assert queries.sample_norms(store, run_id).empty
    assert queries.snapshot(store, run_id, 0).columns.tolist() == ["point", "label", "norm"]
    assert queries.checkpoints(store, run_id).empty
    final = queries.final_metrics(store, [run_id], ["eval/recall@1"])
    assert final["run_id"].tolist() == [run_id] and final["eval/recall@1"].isna().all()


def test_unknown_run_id_is_a_clear_error(store, config):
    known = store.create_run(config)
    calls = [
        lambda: queries.get_run(store, "ghost"),
        lambda: queries.metric_names(store, [known, "ghost"]),
        lambda: queries.eval_names(store, ["ghost"]),
        lambda: queries.eval_series(store, ["ghost"]),
        lambda: queries.final_metrics(store, ["ghost"]),
        lambda: queries.config_diff(store, [known, "ghost"]),
        lambda: queries.sample_norms(store, "ghost"),
        lambda: queries.snapshot_steps(store, "ghost"),
        lambda: queries.snapshot(store, "ghost", 0),
        lambda: queries.export_run(store, "ghost", store.home / "x.csv"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="unknown run id 'ghost'"):
            call()


def test_names(store, config):
    a = _trained(store, config, "a", lr=0.1, steps=10, recall=0.8)
    assert queries.metric_names(store, [a]) == ["loss/total", "norm/var"]
    assert queries.eval_names(store, [a]) == ["eval/map", "eval/recall@1"]


def test_final_metrics(store, config):
    a = _trained(store, config, "a", lr=0.1, steps=10, recall=0.8)
    b = _trained(store, config, "b", lr=0.2, steps=20, recall=0.9)
    frame = queries.final_metrics(store, [b, a], ["eval/recall@1", "norm/var", "nope"])
    assert frame.columns.tolist() == ["run_id", "name", "eval/recall@1", "norm/var", "nope"]
    assert frame["run_id"].tolist() == [b, a]
    assert frame["name"].tolist() == ["b", "a"]
    assert frame["eval/recall@1"].tolist() == [0.9, 0.8]  # the last evaluation
    np.testing.assert_allclose(frame["norm/var"], [1.9, 0.9])  # the last step
    assert frame["nope"].isna().all()
    everything = queries.final_metrics(store, [a])
    assert everything.columns.tolist() == [
        "run_id", "name", "eval:eval/map", "eval:eval/recall@1", "train:loss/total",
        "train:norm/var",
    ]  # fmt: skip


def test_final_metrics_keeps_training_batch_and_test_set_values_apart(store, config):
    """The same key logged per step and at evaluation: two columns, never one silently."""
    run_id = store.create_run(config, "both")
    with store.tracker(run_id, flush_interval=3600) as tracker:
        for step in range(1, 6):
            tracker.track_many({"norm/var": 0.1 * step}, step)
        tracker.track_eval({"norm/var": 7.0, "recall@1": 0.5}, 5)
    frame = queries.final_metrics(store, [run_id], ["train:norm/var", "eval:norm/var"])
    assert frame.loc[0, "train:norm/var"] == pytest.approx(0.5)
    assert frame.loc[0, "eval:norm/var"] == pytest.approx(7.0)
    everything = queries.final_metrics(store, [run_id])
    assert everything.columns.tolist()[2:] == ["eval:norm/var", "eval:recall@1", "train:norm/var"]
    assert queries.final_metrics(store, [run_id], ["recall@1"]).loc[0, "recall@1"] == 0.5
    with pytest.raises(ValueError, match="'train:norm/var' or 'eval:norm/var'"):
        queries.final_metrics(store, [run_id], ["norm/var"])


def test_final_metrics_qualifiers_are_the_catalogue_sources():
    from sphere_engine.catalogue import Source

    assert {queries.EVAL_SOURCE, queries.TRAIN_SOURCE} == {s.value for s in Source}
    assert Source.EVALUATION.value == queries.EVAL_SOURCE


def test_config_diff_shows_only_differing_dotted_keys(store, config):
    a = store.create_run(config)
    other = {**config, "optimizer": {"name": "sgd", "lr": 0.001}, "extra": {"flag": True}}
    b = store.create_run(other)
    frame = queries.config_diff(store, [a, b])
    assert frame.columns.tolist() == ["key", a, b]
    assert frame["key"].tolist() == ["extra.flag", "optimizer.name"]
    assert frame[a].tolist() == [None, "adam"]
    assert frame[b].tolist() == ["true", "sgd"]
    assert queries.config_diff(store, [a, a]).empty


def test_snapshots(store, config):
    run_id = store.create_run(config)
    with store.tracker(run_id) as tracker:
        for step in (100, 0, 50):
            tracker.track_snapshot(np.full((4, 2), step, np.float32), np.arange(4), step)
    assert queries.snapshot_steps(store, run_id) == [0, 50, 100]
    frame = queries.snapshot(store, run_id, 50)
    assert frame.columns.tolist() == ["point", "label", "norm", "c0", "c1"]
    assert frame["c0"].tolist() == [50.0] * 4
    assert queries.snapshot(store, run_id, 7).empty
    with pytest.raises(ValueError, match="step must be an integer"):
        queries.snapshot(store, run_id, "50")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_round_trips(store, config, tmp_path, fmt):
    run_id = _trained(store, config, "a", lr=0.1, steps=50, recall=0.8)
    path = queries.export_run(store, run_id, tmp_path / f"run.{fmt}", fmt)
    back = pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)
    assert back.columns.tolist() == ["run_id", "step", "name", "value", "wall_time"]
    assert len(back) == 100
    loss = back[back["name"] == "loss/total"].sort_values("step")
    np.testing.assert_allclose(loss["value"], [1.0 / (s + 1) for s in range(50)])
    assert (back["run_id"] == run_id).all()
    evals = queries.export_run(store, run_id, tmp_path / f"evals.{fmt}", fmt, table="evals")
    assert evals.exists()


def test_export_bad_arguments(store, config, tmp_path):
    run_id = store.create_run(config)
    with pytest.raises(ValueError, match="fmt must be"):
        queries.export_run(store, run_id, tmp_path / "x.json", "json")
    with pytest.raises(ValueError, match="does not exist"):
        queries.export_run(store, run_id, tmp_path / "missing" / "x.csv")
