"""The IVF Recall@1 against the exact one on the same embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics.approximate import ivf_recall_at_1
from sphere_engine.metrics.inputs import l2_normalize
from sphere_engine.metrics.retrieval import retrieval_scores


def test_probing_every_cell_is_exact(make_clustered):
    x, labels = make_clustered(10, 60, 16, spread=0.5, seed=2)
    x = l2_normalize(x)
    exact = retrieval_scores(x, labels, x, labels, exclude_self=True, ks=(1,))["recall@1"]
    every_cell = ivf_recall_at_1(x, labels, nlist=8, nprobe=8)
    assert every_cell["recall@1_approx"] == pytest.approx(exact)
    one_cell = ivf_recall_at_1(x, labels, nlist=8, nprobe=1)
    assert 0.0 <= one_cell["recall@1_approx"] <= 1.0
    assert one_cell["approx/nprobe"] == 1.0


def test_bad_settings_are_refused():
    x = l2_normalize(np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32))
    with pytest.raises(ValueError, match="nlist"):
        ivf_recall_at_1(x, np.zeros(50, dtype=np.int64), nlist=100)
