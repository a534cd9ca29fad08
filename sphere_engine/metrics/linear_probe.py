"""Linear probe (SCIENCE.md §7; SimCLR's protocol): a linear classifier on frozen
train-split embeddings, its accuracy on the test split.

The embeddings are L2-normalised (``normalize=True``, the geometry the losses train),
then standardised with the train split's mean and std, and a multinomial logistic
regression (scikit-learn, L-BFGS, L2 penalty ``1 / c``) is fitted. L-BFGS from a zero
start is deterministic, so the result is reproducible. A test label the train split
never had is always a miss.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from sphere_engine.metrics.inputs import (
    check_embeddings,
    check_labels,
    check_pair,
    check_same_dimension,
    l2_normalize,
)


def linear_probe_accuracy(
    train_embeddings: Any,
    train_labels: Any,
    test_embeddings: Any,
    test_labels: Any,
    *,
    normalize: bool = True,
    c: float = 1.0,
    max_iter: int = 1000,
) -> dict[str, float]:
    """``linear_probe/accuracy`` (test) and ``linear_probe/train_accuracy`` of a
    logistic regression fitted on N × d train embeddings, scored on M × d test ones."""
    train_x, train_y = check_pair(train_embeddings, train_labels)
    test_x = check_embeddings(test_embeddings, "test_embeddings")
    test_y = check_labels(test_labels, test_x.shape[0], "test_labels")
    check_same_dimension(test_x, "test_embeddings", train_x, "the train embeddings")
    if isinstance(c, bool) or not isinstance(c, int | float) or not c > 0:
        raise ValueError(f"c must be a positive number; got {c!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    if normalize:
        train_x, test_x = l2_normalize(train_x), l2_normalize(test_x, "test_embeddings")
    mean = train_x.mean(axis=0, dtype=np.float64)
    std = train_x.std(axis=0, dtype=np.float64)
    std[std == 0] = 1.0  # a constant coordinate carries no information; leave it at 0
    model = LogisticRegression(C=float(c), max_iter=max_iter)
    with warnings.catch_warnings():
        # hitting max_iter still gives a usable probe; the caller chose the budget
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit((train_x - mean) / std, train_y)
    return {
        "linear_probe/accuracy": float((model.predict((test_x - mean) / std) == test_y).mean()),
        "linear_probe/train_accuracy": float(
            (model.predict((train_x - mean) / std) == train_y).mean()
        ),
    }
