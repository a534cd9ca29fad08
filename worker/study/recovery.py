"""A coordinator's state rebuilt at start from the two places that outlive it: the
study's journal (trials and their states) and the run store (the runs, by their tags).
A run recorded in the store is followed, never launched again."""

from __future__ import annotations

from optuna.trial import TrialState

from worker.study.arms import open_arm_studies
from worker.study.runs import study_runs
from worker.study.state import ENDED_WELL, CoordinatorState, Slot


class Recovery(CoordinatorState):
    def rebuild(self) -> None:
        """Every trial and run as the journal and the store hold them."""
        self.studies = open_arm_studies(self.home, self.study_id, self.spec)
        self.completed = {
            arm: len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
            for arm, study in self.studies.items()
        }
        self.known = {}
        self.repro_finished = {}
        # a trial is in the journal before its first run is launched, and reproductions
        # follow completed trials: a journal without trials means a study without runs,
        # and a new study skips the store's listing (the run catalogue read: most of
        # its start after the imports)
        asked = any(study.get_trials(deepcopy=False) for study in self.studies.values())
        for run in study_runs(self.store, self.study_id) if asked else []:
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
