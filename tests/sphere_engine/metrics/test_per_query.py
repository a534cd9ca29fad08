"""Per-query and per-class results against a brute-force ranking of every pair."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics.inputs import l2_normalize
from sphere_engine.metrics.per_query import QueryCollector
from sphere_engine.metrics.retrieval import COUNTING_MIN_R, retrieval_scores


def _brute_force(x: np.ndarray, labels: np.ndarray):
    """Per query: ranked rows (score desc, index asc, self excluded), hit@1, AP@R."""
    scores = x @ x.T
    ranked, hits, precisions = [], [], []
    for i in range(len(x)):
        others = np.array([j for j in range(len(x)) if j != i])
        order = others[np.lexsort((others, -scores[i, others]))]
        relevant = labels[order] == labels[i]
        r = int(relevant.sum())
        ranked.append(order)
        hits.append(bool(relevant[0]))
        found = np.cumsum(relevant[:r])
        precisions.append(
            float((found / np.arange(1, r + 1) * relevant[:r]).sum() / r) if r else np.nan
        )
    return ranked, np.array(hits), np.array(precisions), scores


@pytest.mark.parametrize("per_class", [5, COUNTING_MIN_R + 6])  # ranked lists and counting
def test_per_query_and_per_class_match_brute_force(per_class, make_clustered):
    x, labels = make_clustered(4, per_class, 8, spread=0.6, seed=3)
    x = np.concatenate([x, x[:1] + 5.0])  # one class of a single sample: not retrievable
    labels = np.concatenate([labels, [9]])
    x = l2_normalize(x)
    collector = QueryCollector(top_k=3)
    metrics = retrieval_scores(x, labels, x, labels, exclude_self=True, collector=collector)
    result = collector.results(x, x, labels, "cosine")
    ranked, hits, precisions, scores = _brute_force(x, labels)

    rows = result.queries
    assert rows["query"].tolist() == list(range(len(x) - 1))  # the singleton is not kept
    np.testing.assert_array_equal(rows["hit@1"], hits[:-1])
    np.testing.assert_allclose(rows["ap@r"], precisions[:-1], rtol=1e-6)
    expected_top = np.stack([order[:3] for order in ranked[:-1]])
    np.testing.assert_array_equal(rows["neighbors"], expected_top)
    np.testing.assert_array_equal(rows["neighbor_labels"], labels[expected_top])
    expected_similarity = np.take_along_axis(scores[:-1], expected_top, 1)
    np.testing.assert_allclose(rows["similarities"], expected_similarity, rtol=1e-5)

    classes = result.classes
    assert classes["label"].tolist() == [0, 1, 2, 3, 9]
    assert classes["samples"].tolist() == [per_class] * 4 + [1]
    assert classes["queries"].tolist() == [per_class] * 4 + [0]
    for position, label in enumerate(classes["label"][:4]):
        mine = labels[:-1] == label
        assert classes["recall@1"][position] == pytest.approx(hits[:-1][mine].mean())
        assert classes["map@r"][position] == pytest.approx(precisions[:-1][mine].mean())
    assert np.isnan(classes["recall@1"][4]) and np.isnan(classes["map@r"][4])
    # the singleton is reported, and R@1 is over the retrievable queries only
    assert metrics["retrieval/classes_skipped"] == 1.0
    assert metrics["recall@1"] == pytest.approx(hits[:-1].mean())


def test_queries_beyond_the_limit_are_a_seeded_sample(make_clustered):
    x, labels = make_clustered(5, 40, 8, spread=0.5)
    x = l2_normalize(x)
    kept = []
    for _ in range(2):
        collector = QueryCollector(max_queries=30, top_k=2, seed=7)
        retrieval_scores(x, labels, x, labels, exclude_self=True, collector=collector)
        kept.append(collector.results(x, x, labels, "cosine").queries["query"])
    assert kept[0].size == 30 and np.unique(kept[0]).size == 30
    np.testing.assert_array_equal(kept[0], kept[1])
    # per-class numbers still cover every query, not only the sample
    assert collector.results(x, x, labels, "cosine").classes["queries"].sum() == 200


def test_bad_limits_are_refused():
    with pytest.raises(ValueError, match="top_k"):
        QueryCollector(top_k=0)
