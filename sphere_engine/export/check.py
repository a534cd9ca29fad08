"""The parity check of an exported model: its embeddings and its metrics vs PyTorch's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

COSINE_TOLERANCE = 1e-5  # max (1 − cos) between exported and PyTorch embeddings, fp32
METRIC_TOLERANCE = 1e-3  # 0.1 point on metrics in [0, 1]


def point_metrics(names: list[str]) -> list[str]:
    """The metrics among ``names`` measured in points: the catalogue's fractions
    (recall@K, MAP@R, NMI, accuracies, TAR@FAR, ...); angles, norms and counts have no
    "point" and are left out of the check."""
    from sphere_engine.catalogue.lookup import find
    from sphere_engine.catalogue.metric import Source

    found = {name: find(name, Source.EVALUATION) for name in names}
    return [name for name, metric in found.items() if metric and metric.unit == "fraction"]


def max_cosine_gap(exported: np.ndarray, reference: np.ndarray) -> float:
    """max over rows of 1 − cos(exported row, reference row), in float64."""
    a, b = exported.astype(np.float64), reference.astype(np.float64)
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-300)
    return float(np.max(1.0 - cos)) if len(cos) else 0.0


@dataclass
class ExportCheck:
    """The numbers of one check and whether they pass."""

    samples: int
    max_one_minus_cos: float
    metric_gaps: dict[str, float] = field(default_factory=dict)  # |exported − PyTorch|
    exported_metrics: dict[str, float] = field(default_factory=dict)
    pytorch_metrics: dict[str, float] = field(default_factory=dict)
    fp16: bool = False

    @property
    def worst_metric(self) -> tuple[str, float]:
        if not self.metric_gaps:
            return "", 0.0
        name = max(self.metric_gaps, key=lambda key: self.metric_gaps[key])
        return name, self.metric_gaps[name]

    @property
    def passed(self) -> bool:
        """fp32: both tolerances; fp16 (a measured drop, no tolerance): always."""
        if self.fp16:
            return True
        return (
            self.max_one_minus_cos <= COSINE_TOLERANCE and self.worst_metric[1] <= METRIC_TOLERANCE
        )

    def summary(self) -> str:
        name, gap = self.worst_metric
        worst = f"largest metric gap {gap * 100:.4f} points ({name})" if name else "no metrics"
        mode = "fp16 drop" if self.fp16 else "fp32"
        return (
            f"{mode}: max(1 - cos) = {self.max_one_minus_cos:.3g} over {self.samples} samples "
            f"(limit {COSINE_TOLERANCE:g}); {worst} (limit {METRIC_TOLERANCE * 100:g})"
        )

    def as_record(self) -> dict[str, object]:
        return {
            "samples": self.samples,
            "max_one_minus_cos": self.max_one_minus_cos,
            "metric_gaps": self.metric_gaps,
            "exported_metrics": self.exported_metrics,
            "pytorch_metrics": self.pytorch_metrics,
            "passed": self.passed,
        }


def compare_embeddings(
    exported: np.ndarray,
    reference: np.ndarray,
    exported_metrics: Mapping[str, float],
    pytorch_metrics: Mapping[str, float],
    names: list[str],
    fp16: bool = False,
) -> ExportCheck:
    """The check of ``exported`` vs ``reference`` embeddings (same rows) and of the
    metrics ``names`` computed from each, those measured in points (``point_metrics``;
    names missing on either side are left out)."""
    names = point_metrics(names)
    gaps = {
        name: abs(float(exported_metrics[name]) - float(pytorch_metrics[name]))
        for name in names
        if name in exported_metrics
        and name in pytorch_metrics
        and np.isfinite(exported_metrics[name])
        and np.isfinite(pytorch_metrics[name])
    }
    return ExportCheck(
        samples=len(reference),
        max_one_minus_cos=max_cosine_gap(exported, reference),
        metric_gaps=gaps,
        exported_metrics={name: float(exported_metrics[name]) for name in gaps},
        pytorch_metrics={name: float(pytorch_metrics[name]) for name in gaps},
        fp16=fp16,
    )
