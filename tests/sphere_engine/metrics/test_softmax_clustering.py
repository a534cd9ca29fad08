"""softmax_clustering_metrics: k-means on probability vectors, as clustering_scores."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics import softmax_clustering_metrics
from sphere_engine.metrics.clustering import clustering_scores
from sphere_engine.metrics.softmax_clustering import softmax


def test_equals_clustering_of_the_probabilities(make_clustered):
    logits, y = make_clustered(4, 50, 4, spread=0.9, seed=0)
    logits = 5 * logits
    result = softmax_clustering_metrics(logits, y, seed=3)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities = (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)
    np.testing.assert_allclose(softmax(logits).sum(axis=1), 1, atol=1e-6)
    expected = clustering_scores(probabilities, y, seed=3)
    assert result == {f"clustering/softmax_{k}": v for k, v in expected.items()}
    assert 0 < result["clustering/softmax_nmi"] < 1


def test_confident_correct_classifier_clusters_perfectly():
    y = np.repeat(np.arange(3), 10)
    logits = 20 * np.eye(3)[y] + np.random.default_rng(0).normal(size=(30, 3))
    result = softmax_clustering_metrics(logits, y)
    assert result["clustering/softmax_nmi"] == pytest.approx(1.0)
    assert result["clustering/softmax_f1"] == pytest.approx(1.0)


def test_huge_logits_do_not_overflow_and_bad_input_is_named():
    y = np.array([0, 1, 0, 1])
    logits = np.array([[1e4, 0], [0, 1e4], [9e3, 0], [0, 9e3]])
    assert softmax_clustering_metrics(logits, y)["clustering/softmax_nmi"] == pytest.approx(1)
    with pytest.raises(ValueError, match="labels has 3 entries"):
        softmax_clustering_metrics(logits, y[:3])
