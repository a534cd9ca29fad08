"""Clustering of softmax outputs (SCIENCE.md §7): k-means on p = softmax(logits).

The same seeded k-means (k = number of classes) and the same NMI / pairwise F1 as
``clustering.py``, on the probability vectors instead of the features, which answers
"are the classes separated in what the classifier outputs?" for classifier heads.
The probabilities are not re-normalised (they already sum to one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sphere_engine.metrics.clustering import clustering_scores
from sphere_engine.metrics.inputs import check_pair


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of N × C logits (float64 for stability, returned as float32)."""
    shifted = logits.astype(np.float64) - logits.max(axis=1, keepdims=True)
    exponentials = np.exp(shifted)
    return (exponentials / exponentials.sum(axis=1, keepdims=True)).astype(np.float32)


def softmax_clustering_metrics(
    logits: Any, labels: Any, *, seed: int = 0, backend: str = "auto"
) -> dict[str, float]:
    """``clustering/softmax_nmi``, ``clustering/softmax_ami``, ``clustering/softmax_f1``
    of seeded k-means (k = classes in ``labels``) on softmax(N × C logits)."""
    points, true = check_pair(logits, labels)
    scores = clustering_scores(softmax(points), true, seed=seed, backend=backend)
    return {f"clustering/softmax_{name}": value for name, value in scores.items()}
