"""Where a reproduction's concatenated evaluation runs: a worker's task (torch is
imported there) for a Celery study, the coordinator for a SLURM study or when the task
cannot be sent or never ends. The coordinator waits for its file, which says it ended
(metrics or error); the result is the same wherever it was computed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from db.store import RunStore
from sphere_engine.evaluation.concatenated import concatenated_metrics
from sphere_engine.evaluation.final_test import save_embeddings
from worker import tasks
from worker.study import concatenated, reproductions, storage
from worker.study.coordinator import Coordinator
from worker.study.launcher import SlurmLauncher, WorkerLauncher
from worker.study.spec import parse_spec

STUDY = {
    "name": "joined",
    "folds": 2,
    "trials": 1,
    "base": {
        "data": {"name": "synthetic", "batch_size": 4, "samples_per_class": 2,
                 "options": {"num_classes": 16, "dim": 8}},
        "model": {"name": "mlp", "embedding_dim": 8},
        "training": {"steps": 10, "device": "cpu"},
    },
    "arms": {"triplet": {"set": {"objective.name": "triplet"}}},
}  # fmt: skip


def fold_runs(store: RunStore, tmp_path: Path) -> list[str]:
    """Two finished fold runs, each with its test embeddings of the same 24 samples."""
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(6), 4)
    run_ids = []
    for fold in range(2):
        path = tmp_path / f"fold{fold}.npz"
        embeddings = rng.normal(size=(24, 4)) + labels[:, None] * (fold + 1)
        save_embeddings(path, embeddings, labels, np.arange(24), np.ones(24, dtype=bool))
        run_id = store.create_run(STUDY["base"])
        store.update_run_info(run_id, {"test_embeddings": str(path)})
        run_ids.append(run_id)
    return run_ids


class RecordingLauncher:
    """Starts nothing: remembers the evaluations it was handed (a worker's queue)."""

    def __init__(self) -> None:
        self.handed: list[tuple[str, int, list[str]]] = []

    def launch(self, config, name, tags):  # pragma: no cover - never called here
        raise AssertionError("nothing is launched")

    def cancel(self, run_id: str) -> None:  # pragma: no cover
        raise AssertionError("nothing is cancelled")

    def refresh(self) -> None:
        return None

    def evaluate_concatenated(self, arm: str, repro: int, run_ids: list[str]) -> None:
        self.handed.append((arm, repro, run_ids))


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunStore:
    monkeypatch.setenv("SPHERESCOPE_HOME", str(tmp_path))  # the worker's task's store
    return RunStore(tmp_path)


@pytest.fixture
def study_id(tmp_path: Path) -> str:
    return storage.create_study_folder(tmp_path, parse_spec(STUDY))


def test_the_coordinator_hands_it_on_and_waits_for_its_file(
    tmp_path: Path, store: RunStore, study_id: str
) -> None:
    run_ids = fold_runs(store, tmp_path)
    launcher = RecordingLauncher()
    coordinator = Coordinator(tmp_path, study_id, launcher, store=store)
    coordinator.repro_finished = {("triplet", 0): dict(enumerate(run_ids))}
    coordinator._evaluate_concatenated()
    coordinator._evaluate_concatenated()  # handed on once
    assert launcher.handed == [("triplet", 0, run_ids)]
    assert coordinator._evaluations_pending()
    assert not coordinator._evaluation_ended()
    tasks.concatenated_evaluation.run(study_id, "triplet", 0, run_ids)  # the worker's part
    assert coordinator._evaluation_ended()
    assert not coordinator._evaluations_pending()
    expected = concatenated_metrics([tmp_path / "fold0.npz", tmp_path / "fold1.npz"])
    assert concatenated.stored(tmp_path, study_id, "triplet", 0) == pytest.approx(expected)


def test_an_evaluation_that_never_ends_is_computed_by_the_coordinator(
    tmp_path: Path, store: RunStore, study_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_ids = fold_runs(store, tmp_path)
    coordinator = Coordinator(tmp_path, study_id, RecordingLauncher(), store=store)
    coordinator.repro_finished = {("triplet", 0): dict(enumerate(run_ids))}
    coordinator._evaluate_concatenated()
    monkeypatch.setattr(reproductions, "EVALUATION_WAIT_S", 0.0)
    assert not coordinator._evaluations_pending()
    assert concatenated.stored(tmp_path, study_id, "triplet", 0) is not None


def test_a_failed_evaluation_ends_with_its_error_and_is_tried_again_by_a_new_coordinator(
    tmp_path: Path, store: RunStore, study_id: str
) -> None:
    run_ids = fold_runs(store, tmp_path)
    store.update_run_info(run_ids[1], {"test_embeddings": str(tmp_path / "missing.npz")})
    concatenated.evaluate_and_keep(tmp_path, study_id, "triplet", 0, run_ids, store)
    assert concatenated.ended(tmp_path, study_id, "triplet", 0)
    assert concatenated.stored(tmp_path, study_id, "triplet", 0) is None
    launcher = RecordingLauncher()
    coordinator = Coordinator(tmp_path, study_id, launcher, store=store)
    coordinator.repro_finished = {("triplet", 0): dict(enumerate(run_ids))}
    coordinator._evaluate_concatenated()
    assert launcher.handed == [("triplet", 0, run_ids)]
    assert coordinator._evaluations_pending()  # the old error is not taken for its end


def test_a_slurm_study_computes_it_in_the_coordinator(
    tmp_path: Path, store: RunStore, study_id: str
) -> None:
    run_ids = fold_runs(store, tmp_path)
    SlurmLauncher(store, study_id, {}).evaluate_concatenated("triplet", 0, run_ids)
    expected = concatenated_metrics([tmp_path / "fold0.npz", tmp_path / "fold1.npz"])
    assert concatenated.stored(tmp_path, study_id, "triplet", 0) == pytest.approx(expected)


def test_a_task_the_broker_refuses_is_computed_in_the_coordinator(
    tmp_path: Path, store: RunStore, study_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_broker(*args, **kwargs):
        raise ConnectionRefusedError("no broker")

    monkeypatch.setattr(tasks.concatenated_evaluation, "apply_async", no_broker)
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:9/0")
    monkeypatch.setattr("worker.routing.queue_for", lambda config, client: "cpu")
    run_ids = fold_runs(store, tmp_path)
    WorkerLauncher(store, study_id).evaluate_concatenated("triplet", 0, run_ids)
    assert concatenated.stored(tmp_path, study_id, "triplet", 0) is not None


def test_the_task_is_sent_to_the_queue_its_runs_trained_on(
    tmp_path: Path, store: RunStore, study_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = []
    monkeypatch.setattr(tasks.concatenated_evaluation, "apply_async",
                        lambda args, queue: sent.append((args, queue)))  # fmt: skip
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:9/0")
    run_ids = fold_runs(store, tmp_path)
    WorkerLauncher(store, study_id).evaluate_concatenated("triplet", 0, run_ids)
    assert sent == [((study_id, "triplet", 0, run_ids), "cpu")]  # training.device = cpu
    assert not concatenated.ended(tmp_path, study_id, "triplet", 0)


def test_the_status_from_the_coordinators_runs_is_the_status_from_the_store(
    tmp_path: Path, store: RunStore, study_id: str
) -> None:
    from worker.study import control
    from worker.study.runs import reproduction_tags, study_runs, trial_tags

    ids = [
        store.create_run(STUDY["base"], tags=trial_tags(study_id, "triplet", 0, 0)),
        store.create_run(STUDY["base"], tags=reproduction_tags(study_id, "triplet", 0, 1)),
    ]
    store.create_run(STUDY["base"], tags=["study:another"])  # not the study's
    store.set_status(ids[0], "running")
    listed = study_runs(store, study_id)
    assert [r.record.run_id for r in listed] == sorted(ids)  # ids sort by time, then at random
    assert study_runs(store, study_id, list(reversed(ids))) == listed
    status = control.study_status(tmp_path, study_id)
    assert control.study_status(tmp_path, study_id, ids) == status
    assert status["runs"] == 2 and status["arms"]["triplet"]["runs_in_flight"] == 2
