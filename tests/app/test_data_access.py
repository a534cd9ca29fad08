"""app.data over a real store filled through RunStore.tracker (no browser)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from app_fixtures import STEPS, held_out_variance

from app import data, transforms
from sphere_engine.config import ConfigError


def test_runs_and_filters(filled):
    frame = data.runs()
    assert set(frame["run_id"]) == {filled.sec, filled.plain, filled.failed, filled.analysis}
    finished = data.runs(status=("finished",))
    assert set(finished["run_id"]) == {filled.sec, filled.plain, filled.analysis}
    assert data.runs(search="plain")["run_id"].tolist() == [filled.plain]
    assert data.runs(kind="analysis")["run_id"].tolist() == [filled.analysis]
    assert data.sweeps() == [filled.sweep_id]
    assert data.tags() == ["sec"]
    assert data.preferred_runs(frame, 2) == [filled.plain, filled.sec]


def test_runs_table_progress_elapsed_and_latest_metrics(filled):
    table = data.runs_table(data.runs()).set_index("run_id")
    assert table.loc[filled.sec, "progress"] == 1.0
    assert table.loc[filled.failed, "progress"] == 0.0
    assert table.loc[filled.sec, "elapsed"] >= 0.0
    assert table.loc[filled.sec, "train:loss/total"] == pytest.approx(1.0 / (1 + STEPS))
    assert table.loc[filled.plain, "train:norm/var"] == pytest.approx(0.3)
    assert table.loc[filled.sec, "eval:recall@1"] == pytest.approx(0.6)
    assert table.loc[filled.failed, "message"].startswith("RuntimeError")


def test_metric_series_downsamples_and_reports_totals(filled):
    frame, totals = data.metric_series([filled.sec, filled.plain], ["norm/var"], max_points=20)
    assert totals == {(filled.sec, "norm/var"): STEPS, (filled.plain, "norm/var"): STEPS}
    assert len(frame) <= 20
    assert (frame["time"] >= 0).all()
    assert data.points_total(totals, ["norm/var"]) == 2 * STEPS


def test_smoothing_uses_the_full_resolution_series(filled):
    frame, totals = data.metric_series([filled.sec], ["loss/total"], smoothing=0.9, max_points=6)
    raw = [1.0 / (1 + step) for step in range(1, STEPS + 1)]
    expected_last = transforms.ema_debiased(raw, 0.9)[-1]
    assert len(frame) <= 6
    assert frame["value"].iloc[-1] == pytest.approx(expected_last)
    # smoothing the already-downsampled points would give another number
    coarse, _ = data.metric_series([filled.sec], ["loss/total"], max_points=6)
    assert transforms.ema_debiased(coarse["value"], 0.9)[-1] != pytest.approx(expected_last)
    assert totals[(filled.sec, "loss/total")] == STEPS


def test_to_wide_and_sample_norms(filled):
    frame, _ = data.metric_series([filled.sec], ["norm/mean", "norm/std"])
    wide = data.to_wide(frame)
    assert {"step", "time", "norm/mean", "norm/std"} <= set(wide.columns)
    assert wide["norm/mean"].iloc[-1] == pytest.approx(2.0 + 0.01 * STEPS)
    norms, total = data.sample_norms(filled.sec, max_points=10)
    assert set(norms["sample"]) == {0, 1, 2}
    assert norms.groupby("sample").size().max() <= 10
    assert total >= len(norms)


def test_paper_table_in_percent(filled):
    table = data.paper_table([filled.sec, filled.plain]).set_index("run_id")
    assert list(table.columns) == ["run", "NMI", "F1", "R@1", "MAP@R", "norm var (test set)"]
    assert table.loc[filled.sec, "R@1"] == pytest.approx(60.0)
    assert table.loc[filled.plain, "R@1"] == pytest.approx(80.0)
    assert table.loc[filled.sec, "norm var (test set)"] == pytest.approx(held_out_variance(0.1))
    assert data.paper_best()["norm var (test set)"] is False
    assert data.paper_best()["R@1"] is True


def test_config_diff_and_grouping(filled):
    diff = data.config_diff([filled.sec, filled.plain])
    assert set(diff["key"]) == {"regularizer.name", "regularizer.weight"}
    assert data.config_values([filled.sec, filled.plain], "regularizer.name") == {
        filled.sec: "sec",
        filled.plain: "none",
    }
    stats, total = data.grouped_series([filled.sec, filled.plain], "norm/var", "regularizer.name")
    assert set(stats["group"]) == {"regularizer.name=sec", "regularizer.name=none"}
    assert total == 2 * STEPS
    sec = stats[stats["group"] == "regularizer.name=sec"]
    assert sec["mean"].to_numpy() == pytest.approx(0.1)
    assert (sec["std"] == 0).all()


def test_flatten_config():
    assert data.flatten_config({"a": {"b": 1, "c": {"d": 2}, "e": {}}}) == {
        "a.b": 1,
        "a.c.d": 2,
        "a.e": {},
    }


def test_snapshot_pca_and_centroid_angles(filled):
    assert data.snapshot_steps(filled.sec) == [30, 60]
    snap = data.snapshot(filled.sec, 60)
    assert data.coordinate_columns(snap) == ["c0", "c1", "c2"]
    projected, explained = data.pca(filled.sec, 60)
    assert len(projected) == len(snap)
    assert explained[0] >= explained[1] > 0
    assert sum(explained) <= 1.0 + 1e-9
    angles, classes = data.centroid_angles(filled.sec, 60)
    assert classes == [0, 1, 2, 3]
    assert angles[0, 1] == pytest.approx(90.0, abs=5)
    assert angles[0, 3] == pytest.approx(math.degrees(math.acos(-1 / math.sqrt(3))), abs=5)


def test_fixed_head_vertices_scaled_to_the_median_norm(filled):
    record = data.run(filled.sec)
    assert data.fixed_head(record.config) == "simplex"
    snap = data.snapshot(filled.sec, 60)
    vertices = data.head_vertices(record.config, snap)
    assert len(vertices) == 4
    norms = np.linalg.norm(vertices[["c0", "c1", "c2"]].to_numpy(), axis=1)
    assert norms == pytest.approx(np.full(4, np.median(snap["norm"])), rel=1e-5)
    assert data.fixed_head({"objective": {"kind": "loss", "name": "triplet"}}) is None


def test_config_error_carries_the_fields_it_concerns():
    error = data.config_error(json.dumps({"data": {"batch_size": 30, "samples_per_class": 4}}))
    assert isinstance(error, ConfigError)
    assert error.paths == ("data.batch_size", "data.samples_per_class")
    assert str(error).startswith("data.batch_size: 30 is not a multiple")
    assert data.config_error(json.dumps({"training": {"steps": 7}})) is None


def test_launch_runs_validates_all_then_records_and_enqueues(store, monkeypatch):
    import worker.submit

    enqueued = []
    monkeypatch.setattr(worker.submit, "broker_url", lambda: "redis://127.0.0.1:1/0")
    monkeypatch.setattr(
        worker.submit, "_enqueue", lambda _store, run_id, config: enqueued.append(config)
    )
    assert data.runs().empty
    ids = data.launch_runs([{"training": {"steps": 7}}], names=["mine"], tags=["t"])
    assert len(ids) == 1
    assert enqueued[0].training.steps == 7  # the full validated config is sent
    record = store.get_run(ids[0])
    assert (record.name, record.tags, record.config["training"]["steps"]) == ("mine", ["t"], 7)
    assert data.runs()["run_id"].tolist() == ids  # the cached listing was cleared
    invalid = {"regularizer": {"name": "none", "weight": 1.0}}
    with pytest.raises(ConfigError) as caught:
        data.launch_runs([{"training": {"steps": 8}}, invalid])
    assert caught.value.paths == ("regularizer.weight", "regularizer.name")
    assert len(enqueued) == 1  # the valid config before the invalid one was not launched
    assert data.runs()["run_id"].tolist() == ids


def test_tags_notes_and_delete(filled_fresh):
    runs = filled_fresh
    data.set_tags(runs.plain, ["baseline", " ", "seed0"])
    data.set_notes(runs.plain, "no regulariser")
    record = data.run(runs.plain)
    assert (record.tags, record.notes) == (["baseline", "seed0"], "no regulariser")
    data.delete_run(runs.failed)
    assert runs.failed not in set(data.runs()["run_id"])


def test_progress_fraction_and_elapsed():
    assert data.progress_fraction(5, 10) == 0.5
    assert data.progress_fraction(None, 10) == 0.0
    assert data.progress_fraction(3, 0) == 0.0
    row = {"started_at": 100.0, "finished_at": 160.0}
    assert data.elapsed_seconds(row) == 60.0
    assert data.elapsed_seconds({"started_at": 100.0, "finished_at": None}, now=130.0) == 30.0
    assert data.elapsed_seconds({"started_at": None}) is None


def test_a_store_written_before_the_catalogue_keeps_its_sources_apart(store):
    """Runs recorded by earlier versions log norm/var under the same key per step and at
    evaluation, in compacted Parquet files: the tables read both, each under its source."""
    run_id = store.create_run({}, "old run", status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in range(1, 11):
            tracker.track_many({"loss/total": 1.0 / step, "norm/var": 0.01 * step}, step)
        tracker.track_eval({"recall@1": 0.7, "norm/var": 4.0, "nmi": 0.5}, 10)
    store.end_run(run_id, "finished")  # compacted: one Parquet file per table
    assert store.problems() == []
    row = data.runs_table(data.runs()).set_index("run_id").loc[run_id]
    assert row["train:norm/var"] == pytest.approx(0.1)
    assert row["eval:recall@1"] == pytest.approx(0.7)
    paper = data.paper_table([run_id]).iloc[0]
    assert paper["norm var (test set)"] == pytest.approx(4.0)
    assert paper["R@1"] == pytest.approx(70.0)
    finals = data.final_metrics([run_id])
    assert finals.loc[0, "train:norm/var"] == pytest.approx(0.1)
    assert finals.loc[0, "eval:norm/var"] == pytest.approx(4.0)


def test_each_read_has_its_own_cache(filled):
    """Every read is built by the one helper from the same inner function; Streamlit
    must still key each read's cache apart (same arguments, different answers)."""
    assert "recall@1" in data.eval_names([filled.sec])
    assert "recall@1" not in data.metric_names([filled.sec])
    assert "loss/total" in data.metric_names([filled.sec])


def test_the_data_layer_loads_neither_torch_nor_faiss():
    import subprocess
    import sys

    code = "import sys, app.data; print([m for m in ('torch', 'faiss') if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


def test_live_reads_count_points_flushed_during_the_first_read_once(store, monkeypatch):
    """A flush that lands between the live page's "last step" and its first full read
    put those steps in both that read and the next incremental one: the points logged
    were counted twice in the "N points logged" caption."""
    from app_fixtures import config, scalars

    from app.data import live

    run_id = store.create_run(config(), "live run")
    store.set_status(run_id, "running", device="cpu")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in range(1, 11):
            tracker.track_many(scalars(step, 0.1), step)
    read_series = live.metric_series
    flushes = iter([True])

    def read_after_a_flush(*args, **kwargs):  # the worker flushes steps 11, 12 meanwhile
        if next(flushes, False):
            with store.tracker(run_id, flush_interval=0) as tracker:
                for step in (11, 12):
                    tracker.track_many(scalars(step, 0.1), step)
        return read_series(*args, **kwargs)

    monkeypatch.setattr(live, "metric_series", read_after_a_flush)
    series = live.LiveSeries(run_id, ["norm/var"], max_points=50)
    frame, totals = series.read()
    with store.tracker(run_id, flush_interval=0) as tracker:
        tracker.track_many(scalars(13, 0.1), 13)
    frame, totals = series.read()
    assert totals == {(run_id, "norm/var"): 13}
    assert sorted(frame["step"]) == list(range(1, 14))
