"""How often the coordinator reads a running trial's findings (a read of its whole
series): at most its CPU cost / ``FINDINGS_CPU_SHARE`` apart, the first read of a run
included (with short runs a first read a fixed 10 s in was most of the reads)."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from dear_import import DEAR_IMPORT_S, make_import_dear

import db.findings
from worker.study import storage, watching
from worker.study.coordinator import Coordinator
from worker.study.spec import parse_spec
from worker.study.state import Slot

STUDY = {
    "name": "watched",
    "folds": 2,
    "trials": 2,
    "base": {
        "data": {"name": "synthetic", "batch_size": 4, "samples_per_class": 2,
                 "options": {"num_classes": 16, "dim": 8}},
        "model": {"name": "mlp", "embedding_dim": 8},
        "training": {"steps": 1000},
    },
    "arms": {"triplet": {"set": {"objective.name": "triplet"},
                         "space": {"optimizer.lr": {"type": "log_float", "low": 1e-4,
                                                    "high": 1e-2}}}},
}  # fmt: skip


class NoLauncher:
    def launch(self, config, name, tags):  # pragma: no cover - never called here
        raise AssertionError("nothing is launched")

    def cancel(self, run_id: str) -> None:  # pragma: no cover
        raise AssertionError("nothing is cancelled")

    def refresh(self) -> None:
        return None


def running(status: str = "running", progress: int = 5) -> SimpleNamespace:
    """A run's record as ``_report_curve`` reads it: training, at ``progress`` of its
    1000 steps (no evaluation passed at 5)."""
    return SimpleNamespace(
        is_terminal=status != "running",
        config={"diagnostics": {"eval_every": 100}, "training": {"steps": 1000}},
        progress_step=progress,
        run_id="run-a",
        run_info={},
    )


@pytest.fixture
def coordinator(tmp_path: Path) -> Coordinator:
    study_id = storage.create_study_folder(tmp_path, parse_spec(STUDY))
    return Coordinator(tmp_path, study_id, NoLauncher())


def test_a_run_just_followed_waits_as_long_as_the_last_live_read_cost_allows(
    coordinator: Coordinator,
) -> None:
    coordinator.findings_cost_s = 0.5  # another run's live read: 0.5 s of CPU
    slot = Slot("triplet", "trial", 0, 0, "run-a")
    before = time.monotonic()
    assert coordinator._report_curve(slot, None, running()) is False  # type: ignore[arg-type]
    wait = 0.5 / watching.FINDINGS_CPU_SHARE
    assert before + wait <= slot.findings_at <= time.monotonic() + wait


def test_a_live_read_sets_the_wait_and_a_terminal_read_does_not(
    coordinator: Coordinator, monkeypatch: pytest.MonkeyPatch
) -> None:
    def dear_read(store, run_id):  # a read that takes 0.2 s of CPU
        started = time.process_time()
        while time.process_time() - started < 0.2:
            pass
        return []

    monkeypatch.setattr(db.findings, "run_findings", dear_read)
    before = time.monotonic()  # the read's wall time is not bounded on a busy machine
    slot = Slot("triplet", "trial", 0, 0, "run-a", findings_at=before - 1)
    assert coordinator._report_curve(slot, None, running(progress=600)) is False  # type: ignore[arg-type]
    assert coordinator.findings_cost_s >= 0.2
    assert slot.findings_step == 600
    assert slot.findings_at >= before + 0.2 / watching.FINDINGS_CPU_SHARE
    # a run's end reads the findings it stored: not a measure of a live read
    coordinator.findings_cost_s = 0.0
    ended = Slot("triplet", "trial", 1, 0, "run-b", findings_at=time.monotonic() + 100)
    monkeypatch.setattr(coordinator, "_metric_points", lambda run_id: [])
    coordinator._report_curve(ended, SimpleNamespace(report=None), running("finished"))  # type: ignore[arg-type]
    assert coordinator.findings_cost_s == 0.0


def test_an_ended_runs_findings_are_those_it_stored_without_importing_the_rules(
    coordinator: Coordinator, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert watching.FINDINGS_INFO_KEY == db.findings.INFO_KEY
    monkeypatch.setattr(db.findings, "run_findings", lambda store, run_id: 1 / 0)
    diverged = {"name": "diverged", "title": "Training diverged", "severity": "critical",
                "message": "loss nan", "step_start": 30, "step_end": 30}  # fmt: skip
    record = running("finished")
    record.run_info = {db.findings.INFO_KEY: [diverged]}
    assert coordinator._critical_finding(record, 1000) == "Training diverged: loss nan"
    record.run_info = {db.findings.INFO_KEY: []}
    assert coordinator._critical_finding(record, 1000) is None


def test_a_live_read_waits_for_a_share_of_the_run_to_train_as_well_as_for_its_time(
    coordinator: Coordinator, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = []
    monkeypatch.setattr(
        db.findings, "run_findings", lambda store, run_id: reads.append(run_id) or []
    )
    monkeypatch.setattr(watching, "FINDINGS_EVERY_PROGRESS", 0.25)
    slot = Slot("triplet", "trial", 0, 0, "run-a", findings_at=time.monotonic() - 1)
    coordinator._report_curve(slot, None, running(progress=249))  # type: ignore[arg-type]
    assert reads == []  # its time has come, a quarter of its steps not yet
    coordinator._report_curve(slot, None, running(progress=250))  # type: ignore[arg-type]
    assert reads == ["run-a"]
    slot.findings_at = time.monotonic() - 1
    coordinator._report_curve(slot, None, running(progress=499))  # type: ignore[arg-type]
    assert reads == ["run-a"]  # a quarter since the last read, not since the start
    coordinator._report_curve(slot, None, running(progress=500))  # type: ignore[arg-type]
    assert reads == ["run-a", "run-a"]


def test_the_light_curve_read_is_the_shared_readers_over_chunks_and_a_corrupt_file(
    tmp_path: Path,
) -> None:
    from db import queries
    from db.store import RunStore
    from worker.study.curve import metric_points

    store = RunStore(tmp_path)
    run_id = store.create_run({"seed": 0})
    tracker = store.tracker(run_id, flush_interval=3600)
    for step in range(0, 500, 100):  # one chunk per flush, a NaN and another metric
        tracker.track_eval({"map@r": float("nan") if step == 200 else step / 1000,
                            "recall@1": 0.5}, step)  # fmt: skip
        tracker.flush()

    def shared() -> list[tuple[int, float]]:
        frame = queries.eval_series(store, run_id, ["map@r"])
        pairs = zip(frame["step"], frame["value"], strict=True)
        return [(int(s), float(v)) for s, v in pairs if v == v]

    assert metric_points(store, run_id, "map@r") == shared() == [
        (0, 0.0), (100, 0.1), (300, 0.3), (400, 0.4)
    ]  # fmt: skip
    chunk = sorted(store.run_dir(run_id).glob("tables/evals/*.parquet"))[-1]
    chunk.write_bytes(b"not parquet")  # the shared reader quarantines it
    assert metric_points(store, run_id, "map@r") == [(0, 0.0), (100, 0.1), (300, 0.3)]


def test_the_curve_read_never_imports_pyarrow_dataset(tmp_path: Path) -> None:
    """pyarrow.dataset (what a filtered ``read_table`` imports) costs a coordinator more
    CPU than all its curve reads; a fresh process shows whether the read pulls it in."""
    import subprocess
    import sys

    from db.store import RunStore

    store = RunStore(tmp_path)
    run_id = store.create_run({"seed": 0})
    tracker = store.tracker(run_id, flush_interval=3600)
    tracker.track_eval({"map@r": 0.25, "recall@1": 0.5}, 100)
    tracker.flush()
    code = (
        "import sys; from db.store import RunStore; from worker.study.curve import metric_points; "
        f"print(metric_points(RunStore({str(tmp_path)!r}), {run_id!r}, 'map@r'), "
        "'pyarrow.dataset' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[(100,", "0.25)]", "False"]


def test_a_curve_reported_at_once_is_what_reports_one_by_one_give(tmp_path: Path) -> None:
    import optuna

    journal = storage.journal_storage(tmp_path, "s")
    study = optuna.create_study(study_name="s/a", storage=journal, direction="maximize")
    one_by_one, at_once = study.ask(), study.ask()
    points = [(100, 0.1), (200, 0.25), (300, 0.2)]
    for step, value in points:
        one_by_one.report(value, step)
    storage.report_values(at_once, points)
    assert at_once._cached_frozen_trial.intermediate_values == dict(points)
    # a fresh reader of the journal (a coordinator started again, the Study page)
    trials = optuna.load_study(
        study_name="s/a", storage=storage.journal_storage(tmp_path, "s")
    ).trials
    assert trials[0].intermediate_values == trials[1].intermediate_values == dict(points)
    lines = storage.journal_path(tmp_path, "s").read_text().splitlines()
    assert sum('"intermediate_value"' in line for line in lines) == 6


def test_the_first_live_reads_cost_includes_its_imports(
    coordinator: Coordinator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules, pandas and DuckDB are imported by the first live read: the wait it
    sets for the next runs counts them (a dear import stands in for them here)."""
    monkeypatch.setattr(db, "findings", db.findings)  # the import rebinds it: put back after
    make_import_dear(monkeypatch, "db.findings", run_findings=lambda store, run_id: [])
    slot = Slot("triplet", "trial", 0, 0, "run-a", findings_at=time.monotonic() - 1)
    coordinator._report_curve(slot, None, running(progress=600))  # type: ignore[arg-type]
    assert coordinator.findings_cost_s >= DEAR_IMPORT_S
