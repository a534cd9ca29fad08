"""Query–gallery retrieval against a brute-force numpy search, and the protocol switch."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics import (
    query_gallery_metrics,
    retrieval_metrics,
    retrieval_protocol_metrics,
    split_query_gallery,
)


def brute_force_query_gallery(q, qy, g, gy, ks):
    """Rank the whole gallery per query (ties by index); R = gallery samples of the class."""
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    g = g / np.linalg.norm(g, axis=1, keepdims=True)
    scores = q.astype(np.float64) @ g.astype(np.float64).T
    hits, ap, used = {k: [] for k in ks}, [], 0
    for i in range(q.shape[0]):
        ranked = np.lexsort((np.arange(g.shape[0]), -scores[i]))
        relevant = gy[ranked] == qy[i]
        r = int(relevant.sum())
        if r == 0:
            continue
        used += 1
        for k in ks:
            hits[k].append(relevant[:k].any())
        precision = np.cumsum(relevant[:r]) / np.arange(1, r + 1)
        ap.append((precision * relevant[:r]).sum() / r)
    return {f"recall@{k}": np.mean(hits[k]) for k in ks} | {"map@r": np.mean(ap)}, used


@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_query_gallery_matches_brute_force(make_clustered, backend):
    x, y = make_clustered(12, 20, 16, spread=0.7, seed=2)
    is_query = np.random.default_rng(0).random(y.size) < 0.3
    q, qy, g, gy = split_query_gallery(x, y, is_query)
    # one query class absent from the gallery: skipped and counted
    gallery_keep = gy != qy[0]
    g, gy = g[gallery_keep], gy[gallery_keep]
    result = query_gallery_metrics(q, qy, g, gy, recall_ks=(1, 10, 20, 30), backend=backend)
    expected, used = brute_force_query_gallery(q, qy, g, gy, (1, 10, 20, 30))
    for key, value in expected.items():
        assert result[key] == pytest.approx(value, abs=1e-9), key
    assert result["retrieval/queries"] == used
    assert result["retrieval/queries_skipped"] == (qy == qy[0]).sum() > 0


def test_protocol_switch(make_clustered):
    x, y = make_clustered(5, 30, 8, spread=0.5, seed=1)
    is_query = np.arange(y.size) % 3 == 0
    leave_one_out = retrieval_protocol_metrics(x, y, recall_ks=(1, 5))
    assert leave_one_out == retrieval_metrics(x, y, ks=(1, 5))
    split = retrieval_protocol_metrics(
        x, y, protocol="query_gallery", is_query=is_query, recall_ks=(1, 5)
    )
    expected = retrieval_metrics(
        x[is_query], y[is_query], ks=(1, 5), reference=x[~is_query], reference_labels=y[~is_query]
    )
    assert split == expected
    assert split["retrieval/queries"] == is_query.sum()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"protocol": "holdout"}, "protocol must be one of"),
        ({"protocol": "query_gallery"}, "needs is_query"),
        ({"is_query": np.ones(6, dtype=bool)}, "only used by protocol"),
        ({"protocol": "query_gallery", "is_query": np.ones(6, dtype=bool)}, "at least one"),
        ({"protocol": "query_gallery", "is_query": np.ones(5, dtype=bool)}, "shape"),
        ({"protocol": "query_gallery", "is_query": np.arange(6)}, "boolean"),
        ({"recall_ks": (0,)}, "ks must be positive"),
    ],
)
def test_bad_input(options, message):
    x = np.random.default_rng(0).normal(size=(6, 3))
    with pytest.raises(ValueError, match=message):
        retrieval_protocol_metrics(x, np.array([0, 0, 1, 1, 2, 2]), **options)
