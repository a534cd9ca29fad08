"""Effective rank of a set of embeddings (Roy & Vetterli 2007; RankMe, Garrido et al. 2023).

exp of the Shannon entropy of the normalised singular values of the unit embeddings
(not centred, as RankMe: points gathered around one direction are rank ≈ 1 however
their small spread is shaped): d for points spread evenly over d directions, 1 when
they lie on a line or in one place. Its fall over training is dimensional collapse
(Jing et al. 2022).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sphere_engine.metrics.inputs import check_embeddings, l2_normalize

_TINY = 1e-12  # singular values below this (relative to the sum) carry no direction


def effective_rank_scores(unit: np.ndarray) -> float:
    """Effective rank of M × d unit-length rows."""
    singular = np.linalg.svd(unit.astype(np.float64), compute_uv=False)
    total = float(singular.sum())
    if total <= 0.0:
        return 1.0  # no direction at all (zero rows): count it as collapsed
    share = singular / total
    share = share[share > _TINY]
    return float(np.exp(-(share * np.log(share)).sum()))


def effective_rank(embeddings: Any) -> float:
    """Effective rank of N × d embeddings after L2 normalisation (N ≥ 2)."""
    points = check_embeddings(embeddings)
    if points.shape[0] < 2:
        raise ValueError("effective rank needs at least 2 embeddings")
    return effective_rank_scores(l2_normalize(points))
