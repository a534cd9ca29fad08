"""Reproductions: once an arm's trials have all ended, its best setting retrained with
new seeds (``reproductions`` times, each its k fold models or one model of all training
classes), and a reproduction's k fold runs evaluated once on their joined embeddings."""

from __future__ import annotations

import logging
import time
from typing import Any

from worker.study.runs import reproduction_config, reproduction_folds, reproduction_tags
from worker.study.state import CoordinatorState, Slot

log = logging.getLogger(__name__)

#: A concatenated evaluation handed to a worker is waited for this long before the
#: coordinator computes it itself (a queued task is lost with its worker's process).
EVALUATION_WAIT_S = 600.0


class Reproductions(CoordinatorState):
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
        evaluated once, where the launcher says (kept in the study's folder)."""
        from worker.study.concatenated import forget_failure, stored

        if self.spec.folds == 1:
            return
        for (arm, repro), folds in self.repro_finished.items():
            if (arm, repro) in self.concatenated or len(folds) < self.spec.folds:
                continue
            self.concatenated.add((arm, repro))
            if stored(self.home, self.study_id, arm, repro) is not None:
                continue
            forget_failure(self.home, self.study_id, arm, repro)
            run_ids = [folds[f] for f in range(self.spec.folds)]
            self.evaluating[(arm, repro)] = (time.monotonic(), run_ids)
            self.launcher.evaluate_concatenated(arm, repro, run_ids)

    def _evaluations_pending(self) -> bool:
        """Whether a concatenated evaluation has not ended yet (its file: a stat per
        poll). One waited for longer than ``EVALUATION_WAIT_S`` (its task lost with its
        worker) is computed here."""
        from worker.study.concatenated import ended
        from worker.study.launcher import evaluate_here

        for (arm, repro), (since, run_ids) in list(self.evaluating.items()):
            if ended(self.home, self.study_id, arm, repro):
                del self.evaluating[(arm, repro)]
            elif time.monotonic() - since > EVALUATION_WAIT_S:
                log.warning("study %s: %s reproduction %d's concatenated evaluation did not "
                            "end in %.0f s; computing it here",
                            self.study_id, arm, repro, EVALUATION_WAIT_S)  # fmt: skip
                evaluate_here(self.store, self.study_id, arm, repro, run_ids)
                del self.evaluating[(arm, repro)]
        return bool(self.evaluating)
