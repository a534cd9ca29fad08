"""The reader's single retry point: vanished files are re-listed, bad files skipped."""

from __future__ import annotations

import duckdb
import pytest

from db import reader


def _run(store, config, steps=5):
    run_id = store.create_run(config)
    with store.tracker(run_id) as tracker:
        for step in range(steps):
            tracker.track(float(step), "a", step)
    return run_id


def test_a_vanished_file_is_listed_again(store, config, monkeypatch):
    run_id = _run(store, config)
    real = store.files.live_files
    calls = []

    def stale_listing(table, run_ids):
        calls.append(table)
        files = real(table, run_ids)
        if len(calls) == 1:  # as if compaction deleted a chunk after we listed it
            return [*files, store.table_dir(run_id, table) / "c-0000000099-gone.parquet"]
        return files

    monkeypatch.setattr(store.files, "live_files", stale_listing)
    result = reader.query_arrow(store, {"s": ("scalars", [run_id])}, "SELECT count(*) AS n FROM s")
    assert result.column("n")[0].as_py() == 5
    assert len(calls) == 2
    assert store.problems() == []


def test_sql_errors_are_not_swallowed(store, config):
    run_id = _run(store, config)
    with pytest.raises(duckdb.Error):
        reader.query_arrow(store, {"s": ("scalars", [run_id])}, "SELECT no_such_column FROM s")


def test_sources_without_files_read_as_empty_tables(store, config):
    run_id = store.create_run(config)
    sql = "WITH x AS (SELECT count(*) AS n FROM s) SELECT n FROM x"
    result = reader.query_arrow(store, {"s": ("scalars", [run_id])}, sql)
    assert result.column("n").to_pylist() == [0]


def test_bad_sources_are_rejected(store):
    with pytest.raises(ValueError, match="unknown table"):
        reader.query_arrow(store, {"s": ("nope", [])}, "SELECT 1")
    with pytest.raises(ValueError, match="not an identifier"):
        reader.query_arrow(store, {"s; DROP": ("scalars", [])}, "SELECT 1")


def test_each_call_gets_its_own_cursor():
    first, second = reader.cursor(), reader.cursor()
    assert first is not second
    first.close()
    second.close()
