# ruff: noqa: RUF009 - option() returns dataclasses.field(...) with help metadata
"""Config sections of the evaluations of SCIENCE.md §7: ``evaluation`` and ``robustness``.

Part of the one run config (``config.py`` lists them in ``SECTIONS``); kept apart so
each file stays small. ``check_evaluation_combinations`` holds their cross-field rules
(pure, no registries); ``sphere_engine.validation`` adds the dataset check of ``robustness``.

Decisions (docs/architecture.md):
- verification runs at every evaluation by default (bounded by the pair caps);
- softmax clustering runs for classifier heads by default (nothing to do for losses);
- the linear probe is ``auto``: on for self-supervised objectives (those whose traits
  say ``requires_views``, i.e. NT-Xent) on the ``standard`` split, where test classes
  are train classes; ``on`` asks for it with any objective and needs that split;
- robustness is off by default; when on, it attacks at the final evaluation (or at
  every one with ``every_evaluation``), ε in pixel units (inputs in [0, 1]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from sphere_engine.catalogue.facts import ATTACKS, DEFAULT_EPSILONS, KnnBackend
from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.data_section import DataConfig
from sphere_engine.config.fields import option

MAX_LIST = 16  # longest K / FAR / ε list (each value is a stored series)


@dataclass
class EvaluationConfig:
    retrieval_protocol: Literal["leave_one_out", "query_gallery"] = option(
        "leave_one_out",
        "leave_one_out: every test sample queries all the others; query_gallery: a seeded "
        "fraction of the evaluated test samples queries the rest (In-shop style)",
    )
    query_fraction: float = option(
        0.5,
        "query_gallery: fraction of the evaluated test samples used as queries",
        min=0.01,
        max=0.99,
    )
    verification: bool = option(
        True, "Face-verification metrics (ROC, TAR@FAR, EER, 10-fold accuracy) and the ROC"
    )
    far_targets: list[float] = option(
        [1e-1, 1e-2, 1e-3, 1e-4], "FAR values at which TAR is reported (each in (0, 1))"
    )
    max_genuine_pairs: int = option(
        200_000, "Most same-class pairs scored (a seeded sample above)", min=1, max=10_000_000
    )
    max_impostor_pairs: int = option(
        200_000,
        "Impostor pairs scored (seeded); TAR@FAR=x needs at least 10/x of them",
        min=1,
        max=10_000_000,
    )
    agglomerative: bool = option(
        False, "Agglomerative (Ward) clustering NMI too, beside k-means (slower: O(N²))"
    )
    softmax_clustering: bool = option(
        True, "Classifier heads: k-means NMI/AMI/F1 on the softmax outputs too"
    )
    linear_probe: Literal["auto", "on", "off"] = option(
        "auto",
        "Logistic regression on frozen train-split embeddings, accuracy on the test split; "
        "auto: for self-supervised objectives (NT-Xent) on the standard split",
    )
    linear_probe_max_samples: int = option(
        5000,
        "Train-split samples the linear probe is fitted on (seeded)",
        min=10,
        max=200_000,
    )
    knn_backend: KnnBackend = option(
        "auto",
        "Neighbour search and k-means: faiss-gpu, torch-cuda (exact, on the GPU), faiss "
        "(CPU), torch (CPU); auto: the first usable in that order",
    )
    final_test: bool = option(
        False,
        "After the last step, evaluate ONCE on all of the test split (with "
        "retrieval_protocol; keys test/...) and save its embeddings (test_embeddings.npz "
        "in the run's checkpoint folder); with data.folds, the weights of the best "
        "validation evaluation are evaluated, and this is the only time the run sees a "
        "test class",
    )
    background: bool = option(
        True,
        "Compute periodic evaluations in a background thread while training goes on "
        "(results tagged with their step; the run waits for the last one at its end)",
    )


@dataclass
class RobustnessConfig:
    enabled: bool = option(
        False,
        "Adversarial robustness (accuracy for heads, R@1 against a clean gallery for pair "
        "losses) as a function of ε; never on the training steps",
    )
    attacks: list[str] = option(list(ATTACKS), f"L∞ attacks: {', '.join(ATTACKS)}")
    epsilons: list[float] = option(
        list(DEFAULT_EPSILONS), "ε values in pixel units (inputs in [0, 1]); 0 = clean"
    )
    steps: int = option(10, "PGD iterations", min=1, max=1000)
    step_size: float = option(0.0, "PGD step α in pixel units (0: 2.5·ε / steps)", min=0.0)
    random_start: bool = option(True, "PGD starts from a uniform point inside the ε-ball")
    max_samples: int = option(1000, "Test samples attacked (seeded)", min=1, max=100_000)
    every_evaluation: bool = option(
        False, "Attack at every evaluation (false: only at the final one)"
    )


def check_list(name: str, values: list, check: object, rule: str) -> None:
    """``ConfigError`` naming ``name`` unless ``values`` lists 1 to ``MAX_LIST`` distinct
    values that each pass ``check``."""
    if not values or len(values) > MAX_LIST:
        raise ConfigError(name, f"{values!r} must list 1 to {MAX_LIST} values")
    for value in values:
        if not check(value):  # type: ignore[operator]
            raise ConfigError(name, f"{value!r} is out of range; must be {rule}")
    if len(set(values)) != len(values):
        raise ConfigError(name, f"{values!r} repeats a value")


def check_evaluation_combinations(
    evaluation: EvaluationConfig, robustness: RobustnessConfig, data: DataConfig
) -> None:
    """Cross-field rules of the evaluation settings (pure, cheap)."""
    check_list(
        "evaluation.far_targets",
        evaluation.far_targets,
        lambda x: math.isfinite(x) and 0 < x < 1,
        "in (0, 1)",
    )
    if evaluation.linear_probe == "on" and data.split != "standard":
        raise ConfigError(
            "evaluation.linear_probe",
            "'on' needs data.split = 'standard' (the probe is scored on test classes it "
            f"was trained on); data.split is {data.split!r}",
            related=["data.split"],
        )
    check_list(
        "robustness.attacks",
        robustness.attacks,
        lambda a: a in ATTACKS,
        "one of " + ", ".join(map(repr, ATTACKS)),
    )
    check_list(
        "robustness.epsilons",
        robustness.epsilons,
        lambda e: math.isfinite(e) and 0 <= e <= 1,
        "in [0, 1] (pixel units)",
    )
    if not math.isfinite(robustness.step_size):
        raise ConfigError("robustness.step_size", f"{robustness.step_size!r} is not finite")
