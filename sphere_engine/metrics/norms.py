"""Statistics of the raw (un-normalised) embedding norms (SCIENCE.md §6)."""

from __future__ import annotations

from typing import Any

from sphere_engine.geometry import norm_cv
from sphere_engine.metrics.inputs import check_embeddings, row_norms


def norm_statistics(embeddings: Any) -> dict[str, float]:
    """Mean, variance, std, coefficient of variation, min and max of the N row norms.

    embeddings: N × d, raw (not normalised). ``norm/var`` is the population variance
    (ddof = 0), the papers' "norm var"; ``norm/cv`` = std / mean.
    """
    norms = row_norms(check_embeddings(embeddings))
    mean, std = float(norms.mean()), float(norms.std())
    return {
        "norm/mean": mean,
        "norm/var": float(norms.var()),
        "norm/std": std,
        "norm/cv": float(norm_cv(std, mean)),
        "norm/min": float(norms.min()),
        "norm/max": float(norms.max()),
    }
