"""Trials: asked from each arm's Optuna study while its budget lasts (arms advance
together), their folds launched in order as ordinary runs, and the result told to
Optuna when the last fold ends (a fold's value is its best validation value)."""

from __future__ import annotations

import logging

from optuna.trial import TrialState

from worker.study.runs import trial_config, trial_tags
from worker.study.state import ENDED_WELL, CoordinatorState, Slot

log = logging.getLogger(__name__)


class TrialLauncher(CoordinatorState):
    def _launch_trials(self) -> None:
        while self._room() > 0:
            open_arms = [a.name for a in self.spec.arms if self.asked(a.name) < self.spec.trials]
            if not open_arms:
                return
            # the arm with the fewest trials asked: arms advance together
            self._ask(min(open_arms, key=self.asked))

    def _ask(self, arm: str) -> None:
        study = self.studies[arm]
        trial = study.ask()
        for dimension in self.spec.arm(arm).space:
            dimension.suggest(trial)
        self._launch_trial_fold(arm, trial.number, 0)

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

    def _fold_value(self, slot: Slot) -> float | None:
        """The fold's value: its best validation value (early stopping keeps that model),
        from the points read when its run ended."""
        points = slot.points
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
        value = self._fold_value(slot)
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
        self.completed[slot.arm] = self.completed.get(slot.arm, 0) + 1
