"""Where a study lives: ``$SPHERESCOPE_HOME/studies/<id>/`` holds the checked study file
(``spec.json``), Optuna's journal (``journal.log``: one Optuna study per arm, named
``<id>/<arm>``), the coordinator's lock and the cancel flag. The journal outlives any
stack and is never SQLite: a coordinator started again replays it.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from db.atomic import write_json_atomic
from db.store import RunStore
from worker.study.spec import StudySpec, spec_from_json

STUDIES = "studies"
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,100}$")


def studies_dir(home: str | os.PathLike[str]) -> Path:
    return Path(home) / STUDIES


def study_dir(home: str | os.PathLike[str], study_id: str) -> Path:
    return studies_dir(home) / study_id


def journal_path(home: str | os.PathLike[str], study_id: str) -> Path:
    return study_dir(home, study_id) / "journal.log"


def arm_study_name(study_id: str, arm: str) -> str:
    return f"{study_id}/{arm}"


def new_study_id(spec: StudySpec) -> str:
    return f"{spec.name}-{uuid.uuid4().hex[:6]}"


def create_study_folder(home: str | os.PathLike[str], spec: StudySpec) -> str:
    """A new study's folder with its spec; its id."""
    study_id = new_study_id(spec)
    folder = study_dir(home, study_id)
    folder.mkdir(parents=True)
    write_json_atomic(folder / "spec.json", spec.to_dict())
    return study_id


def check_study_id(home: str | os.PathLike[str], study_id: str) -> Path:
    """The study's folder; ``ValueError`` (one line) for an unknown id."""
    folder = study_dir(home, study_id)
    if not ID.match(study_id) or not (folder / "spec.json").is_file():
        known = list_study_ids(home)
        hint = f"; known: {', '.join(known[-5:])}" if known else "; there are no studies yet"
        raise ValueError(f"study {study_id!r} does not exist under {studies_dir(home)}{hint}")
    return folder


def load_study_spec(home: str | os.PathLike[str], study_id: str) -> StudySpec:
    folder = check_study_id(home, study_id)
    return spec_from_json((folder / "spec.json").read_text())


def list_study_ids(home: str | os.PathLike[str]) -> list[str]:
    """Study ids, oldest first."""
    root = studies_dir(home)
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if (p / "spec.json").is_file()]
    return [p.name for p in sorted(found, key=lambda p: (p.stat().st_mtime, p.name))]


def journal_storage(home: str | os.PathLike[str], study_id: str) -> Any:
    """Optuna's storage of the study: a ``JournalStorage`` over its journal file."""
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path = journal_path(home, study_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    return JournalStorage(JournalFileBackend(str(path)))


def cancel_flag(home: str | os.PathLike[str], study_id: str) -> Path:
    return study_dir(home, study_id) / "cancelled"


def finished_flag(home: str | os.PathLike[str], study_id: str) -> Path:
    return study_dir(home, study_id) / "finished"


def is_finished(home: str | os.PathLike[str], study_id: str) -> bool:
    return finished_flag(home, study_id).exists() or cancel_flag(home, study_id).exists()


def default_home() -> Path:
    return RunStore().home


def report_values(trial: Any, values: Sequence[tuple[int, float]]) -> None:
    """``trial.report(value, step)`` for each ``(step, value)`` of a running trial, in one
    journal append (one lock, one read back) where Optuna writes each on its own: a
    fold's curve is read at its end, a dozen points at once. Steps must be new."""
    from optuna.storages import JournalStorage
    from optuna.storages.journal._storage import JournalOperation

    storage = trial.storage if len(values) > 1 else None
    if not isinstance(storage, JournalStorage):
        for step, value in values:
            trial.report(value, step)
        return
    logs = [
        {"op_code": JournalOperation.SET_TRIAL_INTERMEDIATE_VALUE, "trial_id": trial._trial_id,
         "step": int(step), "intermediate_value": float(value)}
        for step, value in values
    ]  # fmt: skip
    # what JournalStorage.set_trial_intermediate_value does for one (optuna 5.0)
    with storage._thread_lock:
        worker_id = storage._replay_result.worker_id
        storage._backend.append_logs([{**log, "worker_id": worker_id} for log in logs])
        storage._sync_with_backend()
    for step, value in values:  # as Trial.report keeps them
        trial._cached_frozen_trial.intermediate_values[int(step)] = float(value)
