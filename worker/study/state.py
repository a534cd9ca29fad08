"""What a study's coordinator holds while it runs, and the reads every part of it shares
(the journal's trials, the runs it recorded, the cancel flag).

The coordinator (``coordinator.py``) is this state with one class per job on top:
``recovery.py`` (rebuilt after a crash), ``trials.py`` (asking trials, launching their
folds, telling Optuna), ``watching.py`` (following a run: curves, pruning, findings),
``reproductions.py`` (retraining each arm's best setting).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import Trial, TrialState

from db.store import RunStore
from worker.study import storage
from worker.study.launcher import RunLauncher
from worker.study.runs import StudyRun

ENDED_WELL = "finished"

#: (arm, "trial"/"repro", number, fold): one run of the study (plus its retry)
RunKey = tuple[str, str, int, int]


@dataclass
class Slot:
    """A run the coordinator follows: a trial's current fold or a reproduction's fold."""

    arm: str
    kind: str  # "trial" or "repro"
    number: int
    fold: int
    run_id: str
    retried: bool = False
    reported_step: int = -1
    findings_at: float = 0.0  # when its findings are read next (monotonic clock)
    findings_step: int = 0  # its progress at the last read of its findings
    evaluations_seen: int = -1  # evaluations the run's progress had passed when last read
    points_read: int = 0
    points: list[tuple[int, float]] = field(default_factory=list)  # the last read
    trial: Trial | None = None
    read_at: float = 0.0
    folder_mtime_ns: int = -1  # the run folder's mtime when its record was last read
    record_read_at: float = -math.inf


@dataclass
class Progress:
    """What the coordinator did; returned for the CLI and the tests."""

    state: str = "running"
    launched: list[str] = field(default_factory=list)


class CoordinatorState:
    def __init__(
        self,
        home: str | os.PathLike[str],
        study_id: str,
        launcher: RunLauncher,
        *,
        parallel: int = 1,
        poll_s: float = 0.25,
        store: RunStore | None = None,
    ) -> None:
        self.home = Path(home)
        self.study_id = study_id
        self.spec = storage.load_study_spec(self.home, study_id)
        self.launcher = launcher
        self.parallel = max(1, parallel)
        self.poll_s = poll_s
        self.store = store or RunStore(self.home)
        self.studies: dict[str, optuna.Study] = {}
        self.slots: dict[str, Slot] = {}  # run id → slot, for runs in flight
        self.known: dict[RunKey, list[StudyRun]] = {}
        self.repro_finished: dict[tuple[str, int], dict[int, str]] = {}  # → fold → run id
        self.concatenated: set[tuple[str, int]] = set()  # evaluated, or started
        # (arm, repro) → (monotonic start, fold run ids): evaluations not ended yet
        self.evaluating: dict[tuple[str, int], tuple[float, list[str]]] = {}
        self.settled = False  # True once a pass launched what there was room for
        self.completed: dict[str, int] = {}  # arm → completed trials
        self.findings_cost_s = 0.0  # CPU seconds of the last live read of a run's findings
        self.progress = Progress()

    # -- what the parts share -----------------------------------------------------------
    def _record(self, key: RunKey, run_id: str, retry: bool) -> None:
        """A run just launched, known from now on (a resumed coordinator finds it by tags)."""
        record = self.store.get_run(run_id)
        number = key[2]
        trial, repro = (number, None) if key[1] == "trial" else (None, number)
        run = StudyRun(record, key[0], key[3], trial, repro, retry)
        self.known.setdefault(key, []).append(run)
        self.progress.launched.append(run_id)

    def _trial(self, arm: str, number: int) -> Trial:
        study = self.studies[arm]
        trial_id = study._storage.get_trial_id_from_study_id_trial_number(
            study._study_id,
            number,
        )
        return Trial(study, trial_id)

    def _cancelled(self) -> bool:
        return storage.cancel_flag(self.home, self.study_id).exists()

    def _room(self) -> int:
        return self.parallel - len(self.slots)

    def asked(self, arm: str) -> int:
        return len(self.studies[arm].get_trials(deepcopy=False))

    def _arm_trials_done(self, arm: str) -> bool:
        study = self.studies[arm]
        trials = study.get_trials(deepcopy=False)
        return len(trials) >= self.spec.trials and all(t.state.is_finished() for t in trials)

    def best_params(self, arm: str) -> dict[str, Any] | None:
        completed = self.studies[arm].get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if not completed:
            return None
        return dict(self.studies[arm].best_trial.params)

    # -- one part calls another's (defined in the class that does that job) ---------------
    def _launch_trial_fold(self, arm: str, number: int, fold: int, retry: bool = False) -> None:
        raise NotImplementedError  # trials.py

    def _trial_fold_ended(self, slot: Slot, status: str, message: str) -> None:
        raise NotImplementedError  # trials.py

    def _launch_repro(
        self, arm: str, repro: int, fold: int, params: dict[str, Any], retry: bool = False
    ) -> None:
        raise NotImplementedError  # reproductions.py
