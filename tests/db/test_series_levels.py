"""The levels fast path of metric_series gives exactly the frame of the raw computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from db import queries
from db.layout import compact_name
from db.levels import series_files, step_grid
from db.schema import SCALAR_LEVELS, SCALARS
from db.step_grid import step_grid_series

NAMES = ["loss/total", "norm/var"]


def _values(length: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    loss = rng.normal(size=length)
    loss[length // 3] = 1e6  # spikes that only a true min/max keeps
    loss[length // 2] = -1e6
    loss[5::97] = np.nan
    loss[7::193] = np.inf
    loss[11::389] = -np.inf
    loss[64:128] = np.nan  # a whole level-64 bucket without a finite value
    loss[length - 1] = np.nan  # a last value that is not finite
    norm = np.cumsum(rng.random(length))
    return {"loss/total": loss, "norm/var": norm}


def _write(store, run_id, values, start: int, stop: int, flush_every: int) -> None:
    tracker = store.tracker(run_id, flush_interval=3600, compact_every=0)
    for step in range(start, stop):
        tracker.track_many({name: float(v[step]) for name, v in values.items()}, step)
        if step % flush_every == flush_every - 1:
            tracker.flush()
    tracker.flush()


@pytest.fixture
def runs(store, config):
    """Four runs of different lengths: compacted, compacted with a raw tail of chunks,
    uncompacted, and compacted then given a tail and compacted again."""
    made = {}
    for kind, length, seed in [
        ("compacted", 9_000, 1),
        ("tail", 13_337, 2),
        ("chunks", 4_100, 3),
        ("twice", 6_001, 4),
    ]:
        run_id = store.create_run(config, name=kind)
        values = _values(length, seed)
        cut = length * 2 // 3
        _write(store, run_id, values, 0, cut, flush_every=1_000)
        if kind != "chunks":
            store.compact(run_id)
        _write(store, run_id, values, cut, length, flush_every=700)
        if kind in ("compacted", "twice"):
            store.compact(run_id)
        made[kind] = (run_id, values)
    return made


def _fast_and_raw(store, run_ids, max_points):
    fast = step_grid_series(store.files, run_ids, NAMES, max_points).to_pandas()
    raw = step_grid_series(store.files, run_ids, NAMES, max_points, use_levels=False).to_pandas()
    return fast, raw


def test_levels_give_the_raw_frame_exactly(store, runs):
    run_ids = [run_id for run_id, _ in runs.values()]
    files = series_files(store.files, run_ids, use_levels=True)
    assert len(files.levels) == 3  # every run but the uncompacted one has levels
    for max_points in (1000, 100, 37, 7):
        width, level = step_grid(13_336, max_points)
        assert level > 1 and width % level == 0
        fast, raw = _fast_and_raw(store, run_ids, max_points)
        pd.testing.assert_frame_equal(fast, raw, check_exact=True)
        assert fast.groupby(["run_id", "name"]).size().max() <= max_points


def test_series_match_a_computation_by_hand(store, runs):
    run_ids = [run_id for run_id, _ in runs.values()]
    max_points = 1000
    frame = queries.metric_series(store, run_ids, NAMES, max_points=max_points)
    width, _ = step_grid(13_336, max_points)
    assert width == 16  # level 8: 14 steps per bucket rounded up
    for run_id, values in runs.values():
        for name in NAMES:
            got = frame[(frame.run_id == run_id) & (frame.name == name)]
            series = values[name]
            starts = list(range(0, len(series), width))
            buckets = [series[s : s + width] for s in starts]
            finite = [b[np.isfinite(b)] for b in buckets]
            assert got["step"].tolist() == starts
            np.testing.assert_array_equal(got["value"], [b[-1] for b in buckets])
            np.testing.assert_array_equal(
                got["min"], [f.min() if f.size else np.nan for f in finite]
            )
            np.testing.assert_array_equal(
                got["max"], [f.max() if f.size else np.nan for f in finite]
            )
            assert frame.attrs["total_points"][(run_id, name)] == len(series)
    assert frame["max"].max() == 1e6 and frame["min"].min() == -1e6


def test_compaction_writes_levels_with_the_compacted_file(store, runs):
    run_id, _ = runs["twice"]
    scalars = [p.name for p in store.table_dir(run_id, SCALARS).iterdir()]
    levels = [p.name for p in store.table_dir(run_id, SCALAR_LEVELS).iterdir()]
    assert scalars == levels == [compact_name(7)]  # 4 + 4 flushes; older levels deleted


def test_runs_without_matching_levels_are_read_raw(store, runs):
    run_id, _ = runs["compacted"]
    before = queries.metric_series(store, [run_id], NAMES, max_points=100)
    (summary,) = store.table_dir(run_id, SCALAR_LEVELS).iterdir()
    # A levels file of another sequence number (a killed compaction) is never used.
    orphan = summary.with_name(compact_name(99))
    summary.rename(orphan)
    assert series_files(store.files, [run_id], use_levels=True).levels == []
    pd.testing.assert_frame_equal(
        queries.metric_series(store, [run_id], NAMES, max_points=100), before, check_exact=True
    )
    store.compact(run_id)  # backfills the missing levels; the orphan is left alone
    assert len(series_files(store.files, [run_id], use_levels=True).levels) == 1
    pd.testing.assert_frame_equal(
        queries.metric_series(store, [run_id], NAMES, max_points=100), before, check_exact=True
    )


def test_a_corrupt_levels_file_is_skipped_and_reported(store, runs):
    run_id, _ = runs["tail"]
    before = queries.metric_series(store, [run_id], NAMES, max_points=100)
    (summary,) = store.table_dir(run_id, SCALAR_LEVELS).iterdir()
    summary.write_bytes(b"PAR1 not really parquet")
    after = queries.metric_series(store, [run_id], NAMES, max_points=100)
    pd.testing.assert_frame_equal(after, before, check_exact=True)
    assert any(str(summary) in problem for problem in store.problems())


@pytest.mark.parametrize(
    ("top", "max_points", "grid"),
    [
        (None, 1000, (1, 1)),
        (999, 1000, (1, 1)),  # short runs: raw values, exact width
        (9_999, 1000, (10, 1)),  # 10 -> 16 would widen by 60 %
        (19_999, 1000, (24, 8)),
        (9_999, 100, (128, 64)),
        (299_999, 1000, (320, 64)),
        (5_000_000, 1000, (5120, 512)),
    ],
)
def test_grid_width_and_level(top, max_points, grid):
    assert step_grid(top, max_points) == grid
    width, _ = grid
    if top is not None:
        assert (top + 1) / max_points <= width <= 1.5 * (top + 1) / max_points + 1
