"""A run's values exported as CSV/Parquet files and TensorBoard event files, read back."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from db import queries
from db.run_export import export_run_files, export_zip
from db.store import RunStore
from db.tensorboard_export import write_tensorboard


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "home")


def _logged_run(store: RunStore) -> str:
    run_id = store.create_run({"lr": 0.1}, "exported", kind="external", status="running")
    tracker = store.tracker(run_id)
    for step in range(1, 6):
        tracker.track_many({"loss/total": 1.0 / step, "norm/var": 0.25 * step}, step)
        tracker.track_sample_norms([3, 7], [1.0 + step, 2.0 + step], step)
    tracker.track_eval({"recall@1": 0.5, "nmi": 0.25}, 3)
    tracker.track_eval({"recall@1": 0.75, "nmi": 0.5}, 5)
    tracker.flush()
    store.end_run(run_id, "finished")
    return run_id


def _read_events(folder: Path) -> EventAccumulator:
    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    accumulator.Reload()
    return accumulator


def test_tensorboard_event_files_hold_every_logged_value(store: RunStore, tmp_path: Path) -> None:
    run_id = _logged_run(store)
    folder = write_tensorboard(store, run_id, tmp_path / "tb")
    events = _read_events(folder)
    tags = set(events.Tags()["scalars"])
    assert tags == {"loss/total", "norm/var", "eval/recall@1", "eval/nmi",
                    "sample_norm/3", "sample_norm/7"}  # fmt: skip
    expected = queries.metric_series(store, run_id, ["loss/total", "norm/var"])
    for name, group in expected.groupby("name"):
        read = events.Scalars(name)
        assert [e.step for e in read] == group["step"].tolist()
        assert [e.value for e in read] == pytest.approx(group["value"].tolist(), rel=1e-6)
    assert [(e.step, e.value) for e in events.Scalars("eval/recall@1")] == [(3, 0.5), (5, 0.75)]
    assert [e.value for e in events.Scalars("sample_norm/7")] == [3.0, 4.0, 5.0, 6.0, 7.0]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_table_files_match_the_store(store: RunStore, tmp_path: Path, fmt: str) -> None:
    run_id = _logged_run(store)
    paths = export_run_files(store, run_id, tmp_path / "out" / "new", fmt)
    assert [p.name for p in paths] == [f"{run_id}-{t}.{fmt}" for t in ("scalars", "evals", "norms")]
    read = pd.read_csv if fmt == "csv" else pd.read_parquet
    scalars, evals, norms = (read(p) for p in paths)
    assert len(scalars) == 10 and set(scalars["name"]) == {"loss/total", "norm/var"}
    assert sorted(zip(evals["step"], evals["name"], evals["value"], strict=True)) == [
        (3, "nmi", 0.25), (3, "recall@1", 0.5), (5, "nmi", 0.5), (5, "recall@1", 0.75),
    ]  # fmt: skip
    assert len(norms) == 10 and set(norms["sample"]) == {3, 7}


def test_zip_holds_the_same_files(store: RunStore) -> None:
    run_id = _logged_run(store)
    names = zipfile.ZipFile(io.BytesIO(export_zip(store, run_id, "csv"))).namelist()
    assert sorted(names) == sorted(f"{run_id}-{t}.csv" for t in ("scalars", "evals", "norms"))
    archive = zipfile.ZipFile(io.BytesIO(export_zip(store, run_id, "tensorboard")))
    assert all(n.startswith(f"{run_id}/events.out.tfevents.") for n in archive.namelist())


def test_bad_format_or_unknown_run_is_a_clear_error(store: RunStore, tmp_path: Path) -> None:
    run_id = _logged_run(store)
    with pytest.raises(ValueError, match="format must be one of csv, parquet, tensorboard"):
        export_run_files(store, run_id, tmp_path, "json")
    with pytest.raises(ValueError, match="unknown run id 'ghost'"):
        export_run_files(store, "ghost", tmp_path, "csv")
