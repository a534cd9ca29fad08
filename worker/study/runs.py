"""The runs of a study: a trial's fold runs and a reproduction's runs, their configs and
their tags, and finding them again in the store (the store is what a resumed
coordinator trusts: a run recorded there exists, whether or not the journal heard of it).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from db.records import RunRecord
from db.store import RunStore
from worker.study.space import set_path_value
from worker.study.spec import StudySpec

#: Seeds of reproductions start here (trials keep the base config's seed), so a
#: reproduction never repeats the trial that chose its setting.
REPRO_SEED_OFFSET = 1000


def trial_config(spec: StudySpec, config: Mapping[str, Any], fold: int) -> dict[str, Any]:
    """A trial's run of ``fold``: validation on that fold's classes, never the test's."""
    out = copy.deepcopy(dict(config))
    set_path_value(out, "data.folds", spec.run_folds)
    set_path_value(out, "data.fold", fold)
    return out


def reproduction_config(
    spec: StudySpec, config: Mapping[str, Any], repro: int, fold: int
) -> dict[str, Any]:
    """Reproduction ``repro`` of a setting: a new seed, evaluated once on the test
    classes at its end (``test/...`` keys); with folds, fold ``fold``'s model, with one
    fold a model of all training classes."""
    out = copy.deepcopy(dict(config))
    seed = int(out.get("training", {}).get("seed", 0))
    set_path_value(out, "training.seed", seed + REPRO_SEED_OFFSET + repro)
    set_path_value(out, "evaluation.final_test", True)
    if spec.folds == 1:
        # all training classes and no validation: nothing to stop early on, and the
        # test split is evaluated once, at the end
        set_path_value(out, "data.folds", 0)
        set_path_value(out, "data.fold", 0)
        set_path_value(out, "training.early_stop_patience", 0)
        steps = int(out.get("training", {}).get("steps", 300))
        set_path_value(out, "diagnostics.eval_every", steps)
    else:
        set_path_value(out, "data.folds", spec.folds)
        set_path_value(out, "data.fold", fold)
    return out


def reproduction_folds(spec: StudySpec) -> int:
    """Runs per reproduction: the k fold models, or one on all training classes."""
    return 1 if spec.folds == 1 else spec.folds


def trial_tags(study_id: str, arm: str, trial: int, fold: int, retry: bool = False) -> list[str]:
    tags = [f"study:{study_id}", f"arm:{arm}", f"trial:{trial}", f"fold:{fold}"]
    return [*tags, "retry:1"] if retry else tags


def reproduction_tags(
    study_id: str, arm: str, repro: int, fold: int, retry: bool = False
) -> list[str]:
    tags = [f"study:{study_id}", f"arm:{arm}", f"repro:{repro}", f"fold:{fold}"]
    return [*tags, "retry:1"] if retry else tags


@dataclass(frozen=True)
class StudyRun:
    """One run of a study as its tags place it."""

    record: RunRecord
    arm: str
    fold: int
    trial: int | None  # None for a reproduction
    repro: int | None
    retry: bool

    @property
    def key(self) -> tuple[str, str, int, int]:
        """(arm, "trial"/"repro", number, fold): a slot filled by one run (plus its retry)."""
        if self.trial is not None:
            return (self.arm, "trial", self.trial, self.fold)
        return (self.arm, "repro", int(self.repro or 0), self.fold)


def _tag_values(tags: list[str]) -> dict[str, str]:
    values = {}
    for tag in tags:
        key, sep, value = tag.partition(":")
        if sep:
            values[key] = value
    return values


def study_runs(
    store: RunStore, study_id: str, run_ids: Sequence[str] | None = None
) -> list[StudyRun]:
    """Every run of the study in the store, oldest first; given ``run_ids`` (a caller
    that knows them all: its coordinator), those records read one by one instead of a
    listing of the store (the run catalogue's query imports pandas and pyarrow.dataset:
    more CPU than a coordinator spends on a run)."""
    runs = []
    tag = f"study:{study_id}"
    if run_ids is None:
        records = store.list_runs(tag=tag)
    else:
        records = [r for r in map(store.get_run, run_ids) if tag in r.tags]
    for record in records:
        tags = _tag_values(record.tags)
        if "arm" not in tags or "fold" not in tags:
            continue
        trial = int(tags["trial"]) if "trial" in tags else None
        repro = int(tags["repro"]) if "repro" in tags else None
        if trial is None and repro is None:
            continue
        runs.append(
            StudyRun(record, tags["arm"], int(tags["fold"]), trial, repro, tags.get("retry") == "1")
        )
    return sorted(runs, key=lambda run: run.record.run_id)
