"""MLRC's concatenated evaluation of fold models' test embeddings equals concatenating
the L2-normalised embeddings by hand and scoring them with the same retrieval metrics."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.evaluation.concatenated import concatenate_embeddings, concatenated_metrics
from sphere_engine.evaluation.final_test import save_embeddings
from sphere_engine.metrics import retrieval_metrics, retrieval_protocol_metrics

LABELS = np.repeat(np.arange(6), 5) + 100  # original class ids


def _fold_files(tmp_path, count: int = 3, dim: int = 4) -> tuple[list, list[np.ndarray]]:
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(6, dim))
    paths, raw = [], []
    for fold in range(count):
        # different scales per model: the per-model normalisation is what makes them equal
        embeddings = (centres[LABELS - 100] + rng.normal(size=(30, dim))) * (fold + 1) * 3.0
        order = rng.permutation(30)  # each file lists the samples in its own order
        path = tmp_path / f"fold{fold}.npz"
        is_query = np.arange(30) % 3 == 0
        save_embeddings(path, embeddings[order], LABELS[order], order, is_query[order])
        paths.append(path)
        raw.append(embeddings.astype(np.float32))
    return paths, raw


def _by_hand(raw: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([e / np.linalg.norm(e, axis=1, keepdims=True) for e in raw], axis=1)


def test_concatenated_equals_concatenating_by_hand(tmp_path):
    paths, raw = _fold_files(tmp_path)
    joined = concatenate_embeddings(paths)
    np.testing.assert_allclose(joined["embeddings"], _by_hand(raw), rtol=1e-6)
    assert joined["ids"].tolist() == list(range(30))
    metrics = concatenated_metrics(paths)
    expected = retrieval_metrics(_by_hand(raw), LABELS)
    for key in ("precision@1", "r_precision", "map@r", "recall@1", "recall@8"):
        assert metrics[key] == pytest.approx(expected[key]), key
    # not the same as one model's (the test would be vacuous if the fold models agreed)
    assert metrics != retrieval_metrics(raw[0], LABELS)


def test_concatenated_query_gallery_uses_the_files_queries(tmp_path):
    paths, raw = _fold_files(tmp_path)
    metrics = concatenated_metrics(paths, protocol="query_gallery", recall_ks=(1, 2))
    expected = retrieval_protocol_metrics(
        _by_hand(raw),
        LABELS,
        protocol="query_gallery",
        is_query=np.arange(30) % 3 == 0,
        recall_ks=(1, 2),
    )
    assert metrics == pytest.approx(expected)
    assert metrics["retrieval/queries"] == 10


def test_files_of_different_test_samples_are_refused(tmp_path):
    paths, raw = _fold_files(tmp_path, count=2)
    other = tmp_path / "other.npz"
    save_embeddings(other, raw[0][:20], LABELS[:20], np.arange(20), np.zeros(20, bool))
    with pytest.raises(ValueError, match=r"other\.npz: its test samples differ"):
        concatenated_metrics([paths[0], other])
    with pytest.raises(ValueError, match=r"missing\.npz: no such test embeddings file"):
        concatenated_metrics([paths[0], tmp_path / "missing.npz"])
    with pytest.raises(ValueError, match="protocol must be one of"):
        concatenated_metrics(paths, protocol="pairs")
