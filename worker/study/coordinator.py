"""The study coordinator: asks Optuna for trials, runs each trial's folds in order as
ordinary runs, reports their validation curves to the pruner, tells Optuna the result,
then retrains each arm's best setting (reproductions).

Everything it knows is rebuilt at start from two places that outlive it: the study's
journal (trials and their states) and the run store (the runs, found by their tags). A
run recorded in the store is never launched again, and a trial is asked only while its
arm has asked fewer than the budget, so a coordinator killed at any point and started
again neither loses nor repeats a trial or a run.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import Trial, TrialState

from db import queries
from db.records import RunRecord
from db.store import RunStore
from worker.study import storage
from worker.study.launcher import RunLauncher
from worker.study.pruning import StudyPruner, build_pruner, critical_finding, curve_step
from worker.study.runs import (
    StudyRun,
    reproduction_config,
    reproduction_folds,
    reproduction_tags,
    study_runs,
    trial_config,
    trial_tags,
)
from worker.study.spec import WILCOXON_MIN_FOLDS, StudySpec

log = logging.getLogger(__name__)

ENDED_WELL = "finished"
#: A running trial's findings are read this often (a read of its whole series).
FINDINGS_EVERY_S = 10.0
LATE_EVALUATION_S = 2.0


class StudyAlreadyRunning(RuntimeError):
    """Another coordinator holds the study's lock."""


@contextlib.contextmanager
def coordinator_lock(home: Path, study_id: str) -> Iterator[None]:
    """One coordinator per study (an advisory lock the OS drops when its process dies)."""
    path = storage.study_dir(home, study_id) / "coordinator.lock"
    handle = path.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StudyAlreadyRunning(
            f"study {study_id}: a coordinator is already running (pid {holder})"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    try:
        yield
    finally:
        handle.close()


def coordinator_running(home: Path, study_id: str) -> bool:
    path = storage.study_dir(home, study_id) / "coordinator.lock"
    if not path.exists():
        return False
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def sampler_for(spec: StudySpec, arm_index: int) -> optuna.samplers.BaseSampler:
    """The arm's seeded sampler (each arm its own seed, so arms do not share draws)."""
    seed = spec.seed + arm_index
    if spec.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if spec.sampler == "grid":
        arm = spec.arms[arm_index]
        space = {d.path: d.grid_values(d.path) for d in arm.space}
        return optuna.samplers.GridSampler(space, seed=seed)
    # constant_liar: trials asked while others run are spread instead of stacked
    startup = max(2, min(10, spec.trials // 4))
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup, constant_liar=True)


def pruner_for(spec: StudySpec) -> StudyPruner:
    p = spec.pruning
    wilcoxon = p.wilcoxon_p if spec.folds >= WILCOXON_MIN_FOLDS else None
    return build_pruner(p.median, p.warmup_trials, p.warmup_evaluations, wilcoxon)


def open_arm_studies(home: Path, study_id: str, spec: StudySpec) -> dict[str, optuna.Study]:
    """The arms' Optuna studies in the journal (created on first use)."""
    journal = storage.journal_storage(home, study_id)
    studies = {}
    for index, arm in enumerate(spec.arms):
        study = optuna.create_study(
            study_name=storage.arm_study_name(study_id, arm.name),
            storage=journal,
            sampler=sampler_for(spec, index),
            pruner=pruner_for(spec),
            direction="maximize",
            load_if_exists=True,
        )
        if not study.user_attrs:
            study.set_user_attr("study_id", study_id)
            study.set_user_attr("arm", arm.name)
            study.set_user_attr("budget", spec.trials)
            study.set_user_attr("metric", spec.metric)
            study.set_user_attr("folds", spec.folds)
        studies[arm.name] = study
    return studies


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
    findings_at: float = 0.0
    evaluations_seen: int = -1  # evaluations the run's progress had passed when last read
    points_read: int = 0
    read_at: float = 0.0


@dataclass
class Progress:
    """What the coordinator did; returned for the CLI and the tests."""

    state: str = "running"
    launched: list[str] = field(default_factory=list)


class Coordinator:
    def __init__(
        self,
        home: str | os.PathLike[str],
        study_id: str,
        launcher: RunLauncher,
        *,
        parallel: int = 1,
        poll_s: float = 0.5,
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
        self.known: dict[tuple[str, str, int, int], list[StudyRun]] = {}
        self.repro_finished: dict[tuple[str, int], dict[int, str]] = {}  # → fold → run id
        self.concatenated: set[tuple[str, int]] = set()
        self.settled = False  # True once a pass launched what there was room for
        self.progress = Progress()

    # -- state from the journal and the store ---------------------------------------------
    def rebuild(self) -> None:
        """Every trial and run as the journal and the store hold them."""
        self.studies = open_arm_studies(self.home, self.study_id, self.spec)
        self.known = {}
        self.repro_finished = {}
        for run in study_runs(self.store, self.study_id):
            self.known.setdefault(run.key, []).append(run)
            if run.repro is not None and run.record.status == ENDED_WELL:
                self.repro_finished.setdefault((run.arm, run.repro), {})[run.fold] = (
                    run.record.run_id
                )
        self.slots = {}
        self.settled = False
        for arm, study in self.studies.items():
            for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
                self._follow_trial(arm, trial.number)
        for arm in self.studies:
            for key, runs in self.known.items():
                if key[0] == arm and key[1] == "repro":
                    last = runs[-1]
                    self.slots[last.record.run_id] = Slot(
                        arm, "repro", key[2], key[3], last.record.run_id, retried=len(runs) > 1
                    )

    def _follow_trial(self, arm: str, number: int) -> None:
        """Follow a running trial's latest fold run, or launch its first fold."""
        folds = [k for k in self.known if k[:3] == (arm, "trial", number)]
        if not folds:
            self._launch_trial_fold(arm, number, 0)
            return
        key = max(folds, key=lambda k: k[3])
        runs = self.known[key]
        last = runs[-1]
        self.slots[last.record.run_id] = Slot(
            arm, "trial", number, key[3], last.record.run_id, retried=len(runs) > 1
        )

    # -- launching ----------------------------------------------------------------------
    def _record(self, key: tuple[str, str, int, int], run_id: str, retry: bool) -> None:
        record = self.store.get_run(run_id)
        run = StudyRun(
            record,
            key[0],
            key[3],
            *((key[2], None) if key[1] == "trial" else (None, key[2])),
            retry,
        )
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

    def _launch_trial_fold(self, arm: str, number: int, fold: int, retry: bool = False) -> None:
        key = (arm, "trial", number, fold)
        existing = self.known.get(key, [])
        if existing and not retry:  # recorded before a crash: follow it, never launch twice
            last = existing[-1]
            self.slots[last.record.run_id] = Slot(
                arm, "trial", number, fold, last.record.run_id, len(existing) > 1
            )
            return
        if self._cancelled():  # a cancelled study launches nothing, even while resuming
            return
        trial = self._trial(arm, number)
        params = trial.params
        config = trial_config(self.spec, self.spec.arm(arm).config(self.spec.base, params), fold)
        name = f"{self.study_id} {arm} trial {number} fold {fold}"
        run_id = self.launcher.launch(
            config, name, trial_tags(self.study_id, arm, number, fold, retry)
        )
        self._record(key, run_id, retry)
        runs = dict(trial.user_attrs.get("runs", {}))
        runs[str(fold)] = run_id
        trial.set_user_attr("runs", runs)
        self.slots[run_id] = Slot(arm, "trial", number, fold, run_id, retried=retry)
        log.info("study %s: %s trial %d fold %d → run %s", self.study_id, arm, number, fold, run_id)

    def _ask(self, arm: str) -> None:
        study = self.studies[arm]
        trial = study.ask()
        for dimension in self.spec.arm(arm).space:
            dimension.suggest(trial)
        self._launch_trial_fold(arm, trial.number, 0)

    def _launch_repro(
        self, arm: str, repro: int, fold: int, params: dict[str, Any], retry: bool = False
    ) -> None:
        key = (arm, "repro", repro, fold)
        if self._cancelled():
            return
        config = reproduction_config(
            self.spec, self.spec.arm(arm).config(self.spec.base, params), repro, fold
        )
        name = f"{self.study_id} {arm} reproduction {repro} fold {fold}"
        run_id = self.launcher.launch(
            config, name, reproduction_tags(self.study_id, arm, repro, fold, retry)
        )
        self._record(key, run_id, retry)
        self.slots[run_id] = Slot(arm, "repro", repro, fold, run_id, retried=retry)

    # -- one pass ---------------------------------------------------------------------
    def asked(self, arm: str) -> int:
        return len(self.studies[arm].get_trials(deepcopy=False))

    def _room(self) -> int:
        return self.parallel - len(self.slots)

    def step(self) -> str:
        """Follow every run once, launch what there is room for; the study's state."""
        if self._cancelled():
            self._cancel_all()
            return "cancelled"
        self.launcher.refresh()
        before = set(self.slots)
        for slot in list(self.slots.values()):
            self._follow(slot)
        if self.settled and set(self.slots) == before:
            return "running"  # nothing ended: nothing new to launch (and no journal reads)
        self.settled = True
        self._launch_trials()
        self._launch_reproductions()
        self._evaluate_concatenated()
        if not self.slots and self._all_done():
            return "finished"
        return "running"

    def _launch_trials(self) -> None:
        while self._room() > 0:
            open_arms = [a.name for a in self.spec.arms if self.asked(a.name) < self.spec.trials]
            if not open_arms:
                return
            # the arm with the fewest trials asked: arms advance together
            self._ask(min(open_arms, key=self.asked))

    def _arm_trials_done(self, arm: str) -> bool:
        study = self.studies[arm]
        trials = study.get_trials(deepcopy=False)
        return len(trials) >= self.spec.trials and all(t.state.is_finished() for t in trials)

    def best_params(self, arm: str) -> dict[str, Any] | None:
        completed = self.studies[arm].get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if not completed:
            return None
        return dict(self.studies[arm].best_trial.params)

    def _launch_reproductions(self) -> None:
        for arm in self.spec.arms:
            if self._room() <= 0 or not self._arm_trials_done(arm.name):
                continue
            params = self.best_params(arm.name)
            if params is None:
                continue
            for repro in range(self.spec.reproductions):
                for fold in range(reproduction_folds(self.spec)):
                    if self._room() <= 0:
                        return
                    if (arm.name, "repro", repro, fold) not in self.known:
                        self._launch_repro(arm.name, repro, fold, params)

    def _all_done(self) -> bool:
        for arm in self.spec.arms:
            if not self._arm_trials_done(arm.name):
                return False
            if self.best_params(arm.name) is None:
                continue  # no completed trial: nothing to reproduce
            for repro in range(self.spec.reproductions):
                for fold in range(reproduction_folds(self.spec)):
                    if (arm.name, "repro", repro, fold) not in self.known:
                        return False
        return True

    def _evaluate_concatenated(self) -> None:
        """A reproduction whose k fold runs have finished: its joined embeddings
        evaluated once (kept in the study's folder)."""
        from worker.study.concatenated import compute_and_store, stored

        if self.spec.folds == 1:
            return
        for (arm, repro), folds in self.repro_finished.items():
            if (arm, repro) in self.concatenated or len(folds) < self.spec.folds:
                continue
            self.concatenated.add((arm, repro))
            if stored(self.home, self.study_id, arm, repro) is not None:
                continue
            run_ids = [folds[f] for f in range(self.spec.folds)]
            try:
                compute_and_store(self.home, self.study_id, arm, repro, run_ids, self.store)
            except (ValueError, OSError) as error:
                log.warning("study %s: %s reproduction %d not concatenated: %s",
                            self.study_id, arm, repro, error)  # fmt: skip

    # -- following one run --------------------------------------------------------------
    def _follow(self, slot: Slot) -> None:
        record = self.store.get_run(slot.run_id)
        if slot.kind == "trial":
            trial = self._trial(slot.arm, slot.number)
            frozen = self.studies[slot.arm]._storage.get_trial(trial._trial_id)
            if frozen.state.is_finished():  # told before a crash; the run is left to end
                self.slots.pop(slot.run_id, None)
                return
            if self._report_curve(slot, trial, record):
                return
        if not record.is_terminal:
            return
        self.slots.pop(slot.run_id, None)
        if record.status == "lost" and not slot.retried:
            log.info("study %s: run %s lost; retrying once", self.study_id, slot.run_id)
            if slot.kind == "trial":
                self._launch_trial_fold(slot.arm, slot.number, slot.fold, retry=True)
            else:
                params = self.best_params(slot.arm) or {}
                self._launch_repro(slot.arm, slot.number, slot.fold, params, retry=True)
            return
        if slot.kind == "trial":
            self._trial_fold_ended(slot, record.status, record.status_message)
        elif record.status == ENDED_WELL:
            self.repro_finished.setdefault((slot.arm, slot.number), {})[slot.fold] = slot.run_id

    def _metric_points(self, run_id: str) -> list[tuple[int, float]]:
        frame = queries.eval_series(self.store, run_id, [self.spec.metric])
        return [
            (int(step), float(value))
            for step, value in zip(frame["step"], frame["value"], strict=True)
            if math.isfinite(value)
        ]

    def _report_curve(self, slot: Slot, trial: Trial, record: RunRecord) -> bool:
        """Report new validation points and check the pruners and the findings; True
        when the trial was pruned. Its evaluations are read only once its progress has
        passed another evaluation step (the heartbeat is cheap to read, a query is not)."""
        now = time.monotonic()
        ended = record.is_terminal
        every = int((record.config.get("diagnostics") or {}).get("eval_every", 1)) or 1
        passed = (record.progress_step or 0) // every
        # an evaluation is computed beside training: its value lands a little later
        late = slot.points_read < passed and now - slot.read_at >= LATE_EVALUATION_S
        if ended or passed != slot.evaluations_seen or late:
            slot.evaluations_seen, slot.read_at = passed, now
            points = self._metric_points(slot.run_id)
            slot.points_read = len(points)
            for step, value in points:
                if step > slot.reported_step:
                    trial.report(value, curve_step(slot.fold, step))
                    slot.reported_step = step
            if not ended and trial.should_prune():
                reason = self.studies[slot.arm].pruner.reason(  # type: ignore[attr-defined]
                    self.studies[slot.arm],
                    self.studies[slot.arm]._storage.get_trial(trial._trial_id),
                )
                self._prune(slot, trial, reason)
                return True
        if ended or now - slot.findings_at >= FINDINGS_EVERY_S:
            slot.findings_at = now
            steps = int((record.config.get("training") or {}).get("steps", 0))
            reason = self._critical_finding(slot.run_id, steps)
            if reason is not None:
                self._prune(slot, trial, reason)
                return True
        return False

    def _critical_finding(self, run_id: str, steps: int) -> str | None:
        from db.findings import run_findings

        try:
            return critical_finding(run_findings(self.store, run_id), steps)
        except Exception:  # a diagnosis never stops the study
            log.exception("study %s: findings of run %s could not be read", self.study_id, run_id)
            return None

    def _prune(self, slot: Slot, trial: Trial, reason: str) -> None:
        log.info("study %s: %s trial %d pruned: %s", self.study_id, slot.arm, slot.number, reason)
        trial.set_user_attr("pruned_reason", reason)
        self.studies[slot.arm].tell(trial, state=TrialState.PRUNED)
        self.slots.pop(slot.run_id, None)
        if not self.store.get_run(slot.run_id).is_terminal:
            self.launcher.cancel(slot.run_id)

    def _fold_value(self, run_id: str) -> float | None:
        """The fold's value: its best validation value (early stopping keeps that model)."""
        points = self._metric_points(run_id)
        return max(value for _, value in points) if points else None

    def _trial_fold_ended(self, slot: Slot, status: str, message: str) -> None:
        trial = self._trial(slot.arm, slot.number)
        study = self.studies[slot.arm]
        if status != ENDED_WELL:
            reason = f"fold {slot.fold} run {slot.run_id} {status}" + (
                f": {message}" if message else ""
            )
            trial.set_user_attr("failed_reason", reason)
            study.tell(trial, state=TrialState.FAIL)
            return
        value = self._fold_value(slot.run_id)
        if value is None:
            trial.set_user_attr(
                "failed_reason", f"fold {slot.fold} run {slot.run_id} logged no {self.spec.metric}"
            )
            study.tell(trial, state=TrialState.FAIL)
            return
        values = dict(trial.user_attrs.get("fold_values", {}))
        values[str(slot.fold)] = value
        trial.set_user_attr("fold_values", values)
        trial.report(value, slot.fold)
        last_fold = self.spec.run_folds - 1 if self.spec.folds > 1 else 0
        if slot.fold < last_fold:
            if trial.should_prune():
                frozen = study._storage.get_trial(trial._trial_id)
                trial.set_user_attr("pruned_reason", study.pruner.reason(study, frozen))  # type: ignore[attr-defined]
                study.tell(trial, state=TrialState.PRUNED)
                return
            self._launch_trial_fold(slot.arm, slot.number, slot.fold + 1)
            return
        study.tell(trial, sum(values.values()) / len(values))

    def _cancel_all(self) -> None:
        for slot in list(self.slots.values()):
            if slot.kind == "trial":
                trial = self._trial(slot.arm, slot.number)
                trial.set_user_attr("failed_reason", "study cancelled")
                with contextlib.suppress(RuntimeError, ValueError):
                    self.studies[slot.arm].tell(trial, state=TrialState.FAIL)
            self.launcher.cancel(slot.run_id)
            self.slots.pop(slot.run_id, None)

    # -- the loop -----------------------------------------------------------------------
    def run(self, max_seconds: float | None = None) -> Progress:
        """Coordinate until the study ends (finished or cancelled)."""
        with coordinator_lock(self.home, self.study_id):
            self.rebuild()
            deadline = None if max_seconds is None else time.monotonic() + max_seconds
            while True:
                state = self.step()
                if state != "running":
                    if state == "finished":
                        storage.finished_flag(self.home, self.study_id).touch()
                    self.progress.state = state
                    return self.progress
                if deadline is not None and time.monotonic() > deadline:
                    return self.progress
                time.sleep(self.poll_s)
