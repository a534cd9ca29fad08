"""RunStore records: creation, listing, status transitions, user fields, cancel, delete."""

from __future__ import annotations

import time

import pytest

from db import RunStore
from db.layout import HOME_ENV


def test_create_and_get_run(store, config):
    run_id = store.create_run(config, "baseline", tags=["b", "a", "b"], sweep_id="s1")
    record = store.get_run(run_id)
    assert record.run_id == run_id
    assert record.name == "baseline"
    assert record.kind == "train"
    assert record.status == "queued"
    assert record.config == config
    assert record.tags == ["a", "b"]
    assert record.sweep_id == "s1"
    assert record.created_at is not None and record.started_at is None
    assert store.run_ids() == [run_id]


def test_home_from_environment(tmp_path, monkeypatch, config):
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "elsewhere"))
    store = RunStore()
    assert store.home == (tmp_path / "elsewhere").resolve()
    run_id = store.create_run(config)
    assert (tmp_path / "elsewhere" / "runs" / run_id / "meta.json").is_file()
    assert store.get_run(run_id).name == run_id  # default name


def test_status_transitions_set_times(store, config):
    run_id = store.create_run(config)
    store.set_status(run_id, "running", device="cuda:0", host="node1", pid=42)
    record = store.get_run(run_id)
    assert record.status == "running"
    assert record.started_at is not None and record.finished_at is None
    assert (record.device, record.host, record.extra) == ("cuda:0", "node1", {"pid": 42})
    store.set_status(run_id, "failed", "CUDA out of memory")
    record = store.get_run(run_id)
    assert record.status == "failed" and record.status_message == "CUDA out of memory"
    assert record.finished_at >= record.started_at
    with pytest.raises(ValueError, match="cannot change status from 'failed' to 'running'"):
        store.set_status(run_id, "running")
    store.request_cancel(run_id)
    store.set_status(run_id, "queued")  # a rerun clears times and the cancel flag
    record = store.get_run(run_id)
    assert record.started_at is None and record.finished_at is None
    assert not store.cancel_requested(run_id)


def test_bad_status_and_kind(store, config):
    run_id = store.create_run(config)
    with pytest.raises(ValueError, match="status 'done' is unknown"):
        store.set_status(run_id, "done")
    with pytest.raises(ValueError, match="kind 'eval' is unknown"):
        store.create_run(config, kind="eval")
    with pytest.raises(ValueError, match="config must be a dict"):
        store.create_run(["not", "a", "dict"])
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        store.create_run({"x": object()})


def test_unknown_and_malformed_run_ids(store):
    for call in (store.get_run, store.request_cancel, store.delete_run, store.compact):
        with pytest.raises(ValueError, match="unknown run id 'nope'"):
            call("nope")
    with pytest.raises(ValueError, match="malformed"):
        store.get_run("../../etc")
    with pytest.raises(ValueError, match="malformed"):
        store.cancel_requested("a/b")


def test_list_runs_filters(store, config):
    a = store.create_run(config, "alpha", tags=["sec"], sweep_id="s1")
    b = store.create_run(config, "beta", kind="analysis", status="running")
    c = store.create_run(config, "gamma", sweep_id="s1")
    store.set_notes(c, "Norm collapse after warm-up")
    assert [r.run_id for r in store.list_runs()] == [c, b, a]  # newest first
    assert [r.run_id for r in store.list_runs(sweep_id="s1")] == [c, a]
    assert [r.run_id for r in store.list_runs(kind="analysis")] == [b]
    assert [r.run_id for r in store.list_runs(status="running")] == [b]
    assert [r.run_id for r in store.list_runs(status=["queued"])] == [c, a]
    assert [r.run_id for r in store.list_runs(tag="sec")] == [a]
    assert [r.run_id for r in store.list_runs(search="COLLAPSE")] == [c]
    assert [r.run_id for r in store.list_runs(search="alp")] == [a]
    assert store.list_runs(search="nothing matches") == []


def test_list_runs_on_empty_store(store):
    assert store.list_runs() == []
    assert store.run_ids() == []


def test_tags_and_notes(store, config):
    run_id = store.create_run(config)
    store.set_tags(run_id, ["  x ", "y"])
    store.set_notes(run_id, "first try")
    record = store.get_run(run_id)
    assert (record.tags, record.notes) == (["x", "y"], "first try")
    with pytest.raises(ValueError, match="tags must be"):
        store.set_tags(run_id, "x")
    with pytest.raises(ValueError, match="non-empty strings"):
        store.set_tags(run_id, ["ok", ""])
    with pytest.raises(ValueError, match="notes must be a string"):
        store.set_notes(run_id, None)


def test_cancel_flag(store, config):
    run_id = store.create_run(config)
    assert store.cancel_requested(run_id) is False
    store.request_cancel(run_id)
    assert store.cancel_requested(run_id) is True


def test_heartbeat_keeps_progress(store, config):
    run_id = store.create_run(config)
    store.heartbeat(run_id, 10, 300)
    store.heartbeat(run_id)
    record = store.get_run(run_id)
    assert (record.progress_step, record.progress_total) == (10, 300)
    assert record.heartbeat_at is not None


def test_mark_lost_runs(store, config):
    silent = store.create_run(config, status="running")
    alive = store.create_run(config, status="running")
    time.sleep(0.05)
    store.heartbeat(alive, 1, 2)
    assert store.mark_lost_runs(max_silence_s=0.03) == [silent]
    assert store.get_run(silent).status == "lost"
    assert store.get_run(alive).status == "running"


def test_delete_run(store, config):
    keep = store.create_run(config)
    gone = store.create_run(config)
    tracker = store.tracker(gone)
    tracker.track(1.0, "loss/total", 0)
    tracker.flush()
    store.delete_run(gone)
    assert store.run_ids() == [keep]
    assert not store.run_dir(gone).exists()
    with pytest.raises(ValueError, match="unknown run id"):
        store.get_run(gone)


def test_checkpoint_dir(store, config):
    run_id = store.create_run(config)
    folder = store.checkpoint_dir(run_id)
    assert folder.is_dir() and folder.parent == store.run_dir(run_id)


def test_run_info_is_made_json(store, config):
    import numpy as np

    run_id = store.create_run(config)
    store.update_run_info(run_id, {"params": np.int64(12), "shape": (1, 28), "x": float("nan")})
    assert store.get_run(run_id).run_info == {"params": 12, "shape": [1, 28], "x": None}
