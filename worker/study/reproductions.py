"""Reproductions: once an arm's trials have all ended, its best setting retrained with
new seeds (``reproductions`` times, each its k fold models or one model of all training
classes), and a reproduction's k fold runs evaluated once on their joined embeddings."""

from __future__ import annotations

import logging
from typing import Any

from worker.study.runs import reproduction_config, reproduction_folds, reproduction_tags
from worker.study.state import CoordinatorState, Slot

log = logging.getLogger(__name__)


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
