"""Cached reads of studies: their journals (Optuna's trials) and the run store (the
reproductions' results). Torch-free: a study's concatenated evaluation is read from what
its coordinator kept."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pandas as pd

from app.data.cache import LIST_TTL, SLOW_LIVE_TTL, store_read

if TYPE_CHECKING:
    from db.store import RunStore

TRIAL_COLUMNS = [
    "arm", "trial", "state", "objective", "fold values", "parameters", "why", "runs",
    "started", "ended",
]  # fmt: skip


@store_read(LIST_TTL)
def study_ids(store: RunStore) -> list[str]:
    """Study ids, newest first."""
    from worker.study.storage import list_study_ids

    return list(reversed(list_study_ids(store.home)))


@store_read(LIST_TTL)
def study_status(store: RunStore, study_id: str) -> dict[str, Any]:
    """``spherescope study status --json``: state, and per arm the budget used."""
    from worker.study.control import study_status as status

    return status(store.home, study_id)


@store_read(LIST_TTL)
def study_spec(store: RunStore, study_id: str) -> dict[str, Any]:
    from worker.study.storage import load_study_spec

    return load_study_spec(store.home, study_id).to_dict()


def _arm_studies(store: RunStore, study_id: str) -> dict[str, Any]:
    import optuna

    from worker.study import storage

    spec = storage.load_study_spec(store.home, study_id)
    journal = storage.journal_storage(store.home, study_id)
    found = {}
    for arm in spec.arms:
        try:
            found[arm.name] = optuna.load_study(
                study_name=storage.arm_study_name(study_id, arm.name), storage=journal
            )
        except KeyError:  # the coordinator has not opened it yet
            continue
    return found


@store_read(LIST_TTL)
def trials(store: RunStore, study_id: str) -> pd.DataFrame:
    """One row per trial of every arm: state, objective, each fold's value, parameters,
    why it was pruned or failed, its runs."""
    rows = []
    for arm, study in _arm_studies(store, study_id).items():
        for trial in study.get_trials(deepcopy=False):
            attrs = trial.user_attrs
            folds = attrs.get("fold_values", {})
            rows.append({
                "arm": arm,
                "trial": trial.number,
                "state": trial.state.name.lower(),
                "objective": trial.value if trial.state.name == "COMPLETE" else None,
                "fold values": ", ".join(f"{k}: {v:.4f}" for k, v in sorted(folds.items())),
                "parameters": json.dumps(trial.params, sort_keys=True),
                "why": attrs.get("pruned_reason") or attrs.get("failed_reason") or "",
                "runs": ", ".join(attrs.get("runs", {}).values()),
                "started": trial.datetime_start,
                "ended": trial.datetime_complete,
            })  # fmt: skip
    return pd.DataFrame(rows, columns=TRIAL_COLUMNS)


@store_read(LIST_TTL)
def trial_params(store: RunStore, study_id: str, arm: str) -> pd.DataFrame:
    """Completed trials of ``arm``: trial, objective and one column per parameter."""
    study = _arm_studies(store, study_id).get(arm)
    rows = []
    for trial in [] if study is None else study.get_trials(deepcopy=False):
        if trial.state.name == "COMPLETE":
            rows.append({"trial": trial.number, "objective": trial.value, **trial.params})
    return pd.DataFrame(rows)


@store_read(SLOW_LIVE_TTL)
def importances(store: RunStore, study_id: str, arm: str, completed: int) -> dict[str, float]:
    """Optuna's fANOVA parameter importances of ``arm`` (``completed``: the count of
    completed trials, so a new one is a new cache entry); {} with too few trials."""
    import optuna
    from optuna.importance import FanovaImportanceEvaluator

    study = _arm_studies(store, study_id).get(arm)
    if study is None or completed < 2 or not study.best_trial.params:
        return {}
    try:
        return dict(
            optuna.importance.get_param_importances(
                study, evaluator=FanovaImportanceEvaluator(seed=0)
            )
        )
    except (ValueError, RuntimeError):  # e.g. every completed trial has the same value
        return {}


@store_read(SLOW_LIVE_TTL)
def result_table(store: RunStore, study_id: str) -> dict[str, Any]:
    """The result table (``StudyResults.to_dict()``) and its Markdown."""
    from worker.study.report import markdown
    from worker.study.results import study_results

    results = study_results(store.home, study_id, store=store)
    return {**results.to_dict(), "markdown": markdown(results)}


@store_read(SLOW_LIVE_TTL)
def study_for_experiment(store: RunStore, experiment: str) -> str | None:
    from worker.study.results import study_for_experiment as find

    return find(store.home, experiment)
