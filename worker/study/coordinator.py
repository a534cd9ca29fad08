"""The study coordinator: asks Optuna for trials, runs each trial's folds in order as
ordinary runs, reports their validation curves to the pruner, tells Optuna the result,
then retrains each arm's best setting (reproductions).

Everything it knows is rebuilt at start from two places that outlive it: the study's
journal (trials and their states) and the run store (the runs, found by their tags). A
run recorded in the store is never launched again, and a trial is asked only while its
arm has asked fewer than the budget, so a coordinator killed at any point and started
again neither loses nor repeats a trial or a run.

One class per job (see ``state.py``); this one holds the loop: one pass follows every
run in flight and launches what there is room for.
"""

from __future__ import annotations

import contextlib
import time

from optuna.trial import TrialState

from worker.study import storage
from worker.study.arms import open_arm_studies
from worker.study.lock import StudyAlreadyRunning, coordinator_lock, coordinator_running
from worker.study.recovery import Recovery
from worker.study.reproductions import Reproductions
from worker.study.state import Progress
from worker.study.trials import TrialLauncher
from worker.study.watching import RunWatcher

# the names other modules (and the app's tests) import from here
__all__ = [
    "Coordinator",
    "Progress",
    "StudyAlreadyRunning",
    "coordinator_lock",
    "coordinator_running",
    "open_arm_studies",
]


class Coordinator(Recovery, TrialLauncher, RunWatcher, Reproductions):
    def step(self) -> str:
        """Follow every run once, launch what there is room for; the study's state."""
        if self._cancelled():
            self._cancel_all()
            return "cancelled"
        self.launcher.refresh()
        before = set(self.slots)
        for slot in list(self.slots.values()):
            self._follow(slot)
        if self.settled and set(self.slots) == before and not self._evaluation_ended():
            return "running"  # nothing ended: nothing new to launch (and no journal reads)
        self.settled = True
        self._launch_trials()
        self._launch_reproductions()
        self._evaluate_concatenated()
        if not self.slots and not self._evaluations_pending() and self._all_done():
            return "finished"
        return "running"

    def _evaluation_ended(self) -> bool:
        """Whether the last concatenated evaluations waited for just ended."""
        return bool(self.evaluating) and not self._evaluations_pending()

    def _cancel_all(self) -> None:
        for slot in list(self.slots.values()):
            if slot.kind == "trial":
                trial = self._trial(slot.arm, slot.number)
                trial.set_user_attr("failed_reason", "study cancelled")
                with contextlib.suppress(RuntimeError, ValueError):
                    self.studies[slot.arm].tell(trial, state=TrialState.FAIL)
            self.launcher.cancel(slot.run_id)
            self.slots.pop(slot.run_id, None)

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
