"""Foreign and damaged files in the store never crash a reader: they are skipped and
reported through ``store.problems()``."""

from __future__ import annotations

import logging

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from db import RunStore, queries
from db.layout import chunk_name


def _run_with_values(store, config, steps=10):
    run_id = store.create_run(config)
    with store.tracker(run_id) as tracker:
        for step in range(steps):
            tracker.track(float(step), "a", step)
    return run_id


def test_garbage_named_like_a_chunk_is_skipped_and_reported(store, config, caplog):
    run_id = _run_with_values(store, config)
    bad = store.table_dir(run_id, "scalars") / chunk_name(999, "dead")
    bad.write_bytes(b"\x00garbage" * 50)
    with caplog.at_level(logging.WARNING, logger="db.store"):
        frame = queries.metric_series(store, run_id, ["a"])
    assert frame["value"].tolist() == [float(s) for s in range(10)]
    assert any(str(bad) in problem for problem in store.problems())
    assert any("corrupt file skipped" in record.message for record in caplog.records)
    # Known bad: the next query does not even list it.
    assert str(bad) not in map(str, store.live_files("scalars", [run_id]))


def test_parquet_with_a_foreign_schema_is_skipped(store, config):
    run_id = _run_with_values(store, config)
    foreign = store.table_dir(run_id, "scalars") / chunk_name(500, "beef")
    pq.write_table(pa.table({"x": [1, 2, 3]}), foreign)
    assert len(queries.metric_series(store, run_id, ["a"])) == 10
    assert any("not a scalars file" in problem for problem in store.problems())


def test_truncated_chunk_is_skipped(store, config):
    run_id = _run_with_values(store, config)
    good = store.table_dir(run_id, "scalars") / chunk_name(0, "0")
    data = next(store.table_dir(run_id, "scalars").glob("c-*.parquet")).read_bytes()
    good.write_bytes(data[: len(data) // 2])
    assert len(queries.metric_series(store, run_id, ["a"])) == 10
    assert len(store.problems()) == 1


def test_stray_files_and_temp_files_are_ignored(store, config):
    run_id = _run_with_values(store, config)
    folder = store.table_dir(run_id, "scalars")
    (folder / "README.txt").write_text("not data")
    (folder / ".tmp-1234-c-0000000009-abc.parquet.part").write_bytes(b"half written")
    assert len(queries.metric_series(store, run_id, ["a"])) == 10
    assert any("README.txt" in problem for problem in store.problems())
    assert not any(".tmp-" in problem for problem in store.problems())


def test_half_written_status_json_is_reported_not_fatal(store, config):
    run_id = _run_with_values(store, config)
    (store.run_dir(run_id) / "status.json").write_text('{"status": "runn')
    (store.run_dir(run_id) / "user.json").write_text("[1, 2]")
    record = store.get_run(run_id)
    # Shown as unreadable, not as a made-up "queued" (see test_status_damage.py).
    assert record.status == "unknown" and record.tags == []
    assert len(queries.list_runs(store)) == 1
    assert sum("status.json" in p or "user.json" in p for p in store.problems()) == 2
    store.set_status(run_id, "queued")  # a rerun writes a new status
    assert store.get_run(run_id).status == "queued"


def test_foreign_folders_and_corrupt_meta_are_skipped_in_listings(store, config):
    run_id = _run_with_values(store, config)
    broken = store.create_run(config)
    (store.run_dir(broken) / "meta.json").write_bytes(b"\xff\xfe not json")
    (store.runs_dir / "notes.txt").write_text("hello")
    (store.runs_dir / "stray-folder").mkdir()
    assert queries.list_runs(store)["run_id"].tolist() == [run_id]
    assert any(broken in problem for problem in store.problems())
    with pytest.raises(ValueError, match=r"meta\.json"):
        store.get_run(broken)


def test_store_on_a_missing_home_is_empty(tmp_path):
    store = RunStore(tmp_path / "fresh")
    assert queries.list_runs(store).empty
    assert store.problems() == []
