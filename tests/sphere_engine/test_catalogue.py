"""The metric catalogue: every key a real training run logs is declared, and shown."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from sphere_engine.catalogue import (
    CHART_GROUPS,
    METRICS,
    PAPER_TABLE,
    RUNS_TABLE,
    Source,
    column_key,
    find,
    group_keys,
    header,
    key_metrics,
    label,
    split_column_key,
)
from sphere_engine.config import RunConfig
from sphere_engine.regularizers import REGULARIZERS
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training

TRAIN, EVAL = Source.TRAINING_BATCH, Source.EVALUATION


def _train(objective: dict, regularizer: str, split: str = "class_disjoint") -> InMemoryTracker:
    config = RunConfig.from_dict(
        {
            "data": {"name": "digits", "split": split, "batch_size": 20, "samples_per_class": 4},
            "model": {"name": "mlp", "embedding_dim": 9},
            "objective": objective,
            "regularizer": {"name": regularizer, "weight": 0.1 if regularizer != "none" else 0},
            "training": {"steps": 2, "seed": 0},
            "diagnostics": {"eval_every": 2, "tracked_samples": 6, "eval_max_samples": 200},
        }
    )
    tracker = InMemoryTracker()
    run_training(config, tracker)
    return tracker


def _uncatalogued(tracker: InMemoryTracker) -> list[str]:
    logged = [(TRAIN, k) for k in tracker.names()]
    logged += [(EVAL, k) for _, k, _ in tracker.evals]
    return sorted({f"{s.value}:{k}" for s, k in logged if find(k, s) is None})


@pytest.mark.parametrize("regularizer", ["none", *REGULARIZERS.names()])
def test_every_key_a_pair_loss_run_logs_is_in_the_catalogue(regularizer: str) -> None:
    tracker = _train({"kind": "loss", "name": "triplet"}, regularizer)
    assert tracker.evals and tracker.names()  # it really logged both kinds
    assert _uncatalogued(tracker) == []


def test_every_key_a_fixed_head_run_logs_is_in_the_catalogue() -> None:
    tracker = _train({"kind": "head", "name": "simplex"}, "sec", split="standard")
    evaluated = {k for _, k, _ in tracker.evals}
    assert {"classifier_accuracy", "vertex/angle_mean"} <= evaluated
    assert _uncatalogued(tracker) == []


def test_every_key_an_analysis_logs_is_in_the_catalogue() -> None:
    from sphere_engine.metrics import evaluate_embeddings

    rng = np.random.default_rng(0)
    labels = np.arange(60) % 3
    metrics = evaluate_embeddings(rng.normal(size=(60, 4)), labels, agglomerative=True)
    assert [k for k in metrics if find(k, EVAL) is None] == []


def test_every_training_metric_is_drawn_by_a_chart_of_the_run_page() -> None:
    groups = {g.id for g in CHART_GROUPS}
    for metric in METRICS:
        if TRAIN in metric.sources:
            assert metric.group in groups, metric.key
        else:
            assert metric.group == "eval", metric.key
    ids = [g.id for g in CHART_GROUPS]
    assert len(ids) == len(set(ids))
    keys = [(m.key, s) for m in METRICS for s in m.sources]
    assert len(keys) == len(set(keys)), "a key is declared twice for one source"


def test_group_keys_picks_logged_members_and_family_members() -> None:
    loss = next(g for g in CHART_GROUPS if g.id == "loss")
    logged = {"loss/total", "loss/sec", "loss/metric", "norm/mean"}
    assert group_keys(loss, logged) == ["loss/total", "loss/metric", "loss/sec"]
    sec = next(g for g in CHART_GROUPS if g.id == "sec")
    assert group_keys(sec, {"sec/mu_ema", "norm/mean"}) == ["sec/mu_ema", "norm/mean"]


def test_training_and_test_set_values_have_distinct_labels_and_columns() -> None:
    assert label("norm/var", TRAIN) == "norm variance (training batch)"
    assert label("norm/var", EVAL) == "norm variance (test set)"
    assert header("recall@1", EVAL) == "R@1"  # only evaluated: no qualifier needed
    assert column_key(TRAIN, "norm/var") != column_key(EVAL, "norm/var")
    assert split_column_key("eval:map@r") == (EVAL, "map@r")
    with pytest.raises(ValueError, match="qualified by its source"):
        split_column_key("norm/var")
    assert label("some/new_key", TRAIN) == "some/new_key"


def test_table_and_cli_views_name_catalogued_metrics() -> None:
    for source, key in (*RUNS_TABLE, *PAPER_TABLE):
        assert find(key, source) is not None, (source, key)
    assert key_metrics()[:4] == ("recall@1", "map@r", "nmi", "f1")
    assert all(find(k, EVAL) is not None for k in key_metrics())


def test_importing_the_catalogue_loads_no_torch_and_no_numpy() -> None:
    code = (
        "import sys, sphere_engine.catalogue, sphere_engine.catalogue.backbones; "
        "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_every_key_the_section_7_evaluations_log_is_in_the_catalogue() -> None:
    """Verification, softmax clustering, linear probe, robustness, configured Ks."""
    config = RunConfig.from_dict(
        {
            "data": {"name": "digits", "split": "standard", "batch_size": 20,
                     "samples_per_class": 4},
            "model": {"name": "mlp", "embedding_dim": 9},
            "objective": {"kind": "head", "name": "linear"},
            "training": {"steps": 2, "seed": 0},
            "diagnostics": {"eval_every": 2, "eval_max_samples": 200, "recall_ks": [1, 10, 30]},
            "evaluation": {"linear_probe": "on", "retrieval_protocol": "query_gallery"},
            "robustness": {"enabled": True, "steps": 1, "max_samples": 40},
        }
    )  # fmt: skip
    tracker = InMemoryTracker()
    run_training(config, tracker)
    evaluated = {k for _, k, _ in tracker.evals}
    for key in (
        "verification/eer",
        "recall@30",
        "linear_probe/accuracy",
        "clustering/softmax_f1",
        "robustness/pgd/accuracy@eps=0.1",
    ):
        assert key in evaluated  # fmt: skip
    assert _uncatalogued(tracker) == []
    # ... and for pair losses, the robustness R@1 keys
    assert find("robustness/fgsm/recall@1@eps=0.05", EVAL) is not None
    assert find("recall@1000", EVAL) is not None and find("recall@1000", TRAIN) is None
