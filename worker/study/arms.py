"""Each arm of a study as an Optuna study in the study's journal: its seeded sampler and
the study's pruner."""

from __future__ import annotations

from pathlib import Path

import optuna

from worker.study import storage
from worker.study.pruning import StudyPruner, build_pruner
from worker.study.spec import WILCOXON_MIN_FOLDS, StudySpec


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
