"""Loading one declared experiment's per-run values from the store (report and CLI)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from db.experiment_runs import experiment_runs, experiment_values
from db.store import RunStore
from sphere_engine.experiments import (
    EXPERIMENT_TAG,
    VARIANT_TAG,
    Experiment,
)
from sphere_engine.experiments.matching import variant_matcher


@dataclass(frozen=True)
class ExperimentData:
    experiment: Experiment
    runs: pd.DataFrame  # db.experiment_runs.RUN_COLUMNS
    values: pd.DataFrame  # one row per run, one column per metric key


def load_experiment(store: RunStore, experiment: Experiment) -> ExperimentData:
    match = variant_matcher(experiment)
    runs = experiment_runs(store, EXPERIMENT_TAG + experiment.name, VARIANT_TAG, match)
    evals, statistics = experiment.metric_sources()
    values = experiment_values(store, runs, evals, statistics)
    return ExperimentData(experiment, runs, values)
