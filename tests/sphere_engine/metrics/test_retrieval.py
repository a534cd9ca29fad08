"""Retrieval metrics against a brute-force, one-query-at-a-time numpy implementation."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from sphere_engine.metrics import backend as backends
from sphere_engine.metrics import (
    knn_accuracy,
    map_at_r,
    precision_at_1,
    r_precision,
    recall_at_k,
    retrieval_metrics,
)

BACKENDS = ("faiss", "torch", "torch-cuda")


@pytest.fixture(autouse=True)
def device_on_cpu(monkeypatch):
    """The torch-cuda backend's code, run on the CPU (``backend.TORCH_DEVICE``)."""
    monkeypatch.setattr(backends, "TORCH_DEVICE", "cpu")


KS = (1, 2, 4, 8)


def brute_force(x, y, ks=KS, ref=None, ref_y=None, normalize=True, knn=10):
    """Full score matrix, then a plain loop over queries; ties by ascending index."""
    x = np.asarray(x, dtype=np.float64)
    exclude_self = ref is None
    ref = x if exclude_self else np.asarray(ref, dtype=np.float64)
    ref_y = y if exclude_self else ref_y
    if normalize:
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        ref = x if exclude_self else ref / np.linalg.norm(ref, axis=1, keepdims=True)
        scores = x @ ref.T
    else:
        scores = -((x[:, None, :] - ref[None, :, :]) ** 2).sum(axis=2)
    hits = {k: [] for k in ks}
    p1, rp, ap, knn_ok, skipped = [], [], [], [], 0
    for i in range(x.shape[0]):
        candidates = np.arange(ref.shape[0])
        if exclude_self:
            candidates = candidates[candidates != i]
        ranked = candidates[np.lexsort((candidates, -scores[i, candidates]))]
        relevant = ref_y[ranked] == y[i]
        r = int(relevant.sum())
        if r == 0:
            skipped += 1
            continue
        for k in ks:
            hits[k].append(relevant[:k].any())
        p1.append(relevant[0])
        rp.append(relevant[:r].mean())
        precision = np.cumsum(relevant[:r]) / np.arange(1, r + 1)
        ap.append((precision * relevant[:r]).sum() / r)
        votes = list(ref_y[ranked[:knn]])
        counts = Counter(votes)
        best = max(counts.values())
        winner = next(v for v in votes if counts[v] == best)
        knn_ok.append(winner == y[i])
    result = {f"recall@{k}": np.mean(hits[k]) for k in ks}
    result |= {"precision@1": np.mean(p1), "r_precision": np.mean(rp), "map@r": np.mean(ap)}
    result |= {"knn_accuracy": np.mean(knn_ok), "retrieval/queries_skipped": skipped}
    return result


def assert_matches(result, expected, tolerance=1e-6):
    """Equal up to float tolerance: float32 scores from different BLAS kernels can swap
    two neighbours whose scores differ by ~1e-7, which moves MAP@R by ~1e-9. Data with
    exactly representable scores is compared at 1e-12."""
    for name, value in expected.items():
        assert result[name] == pytest.approx(value, abs=tolerance), name


@pytest.mark.parametrize("backend", BACKENDS)
def test_random_data_matches_brute_force(backend):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(240, 12)).astype(np.float32)
    y = rng.integers(0, 7, size=240)
    result = retrieval_metrics(x, y, backend=backend)
    assert_matches(result, brute_force(x, y))
    assert 0.0 < result["map@r"] < 0.5  # random data: far from perfect


@pytest.mark.parametrize("backend", BACKENDS)
def test_clustered_data_matches_brute_force(blobs, backend):
    x, y = blobs
    result = retrieval_metrics(x, y, backend=backend)
    expected = brute_force(x, y)
    assert_matches(result, expected)
    assert 0.3 < expected["map@r"] < 0.9  # overlapping classes: informative, not trivial


@pytest.mark.parametrize("backend", BACKENDS)
def test_exact_ties_follow_index_order_like_brute_force(make_sparse_signs, backend):
    x = make_sparse_signs(200, 8, seed=3)
    y = np.random.default_rng(3).integers(0, 5, size=200)
    assert_matches(retrieval_metrics(x, y, backend=backend), brute_force(x, y), 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_euclidean_on_integer_data_matches_brute_force(backend):
    rng = np.random.default_rng(4)
    x = rng.integers(-3, 4, size=(150, 5)).astype(np.float32)  # exact distances, many ties
    y = rng.integers(0, 4, size=150)
    result = retrieval_metrics(x, y, normalize=False, backend=backend)
    assert_matches(result, brute_force(x, y, normalize=False), 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reference_set_is_searched_instead(blobs, backend):
    x, y = blobs
    queries, query_labels = x[::3], y[::3].copy()
    query_labels[:4] = 99  # a label the reference lacks: no positives, skipped
    mask = np.ones(len(y), bool)
    mask[::3] = False
    ref, ref_labels = x[mask], y[mask]
    result = retrieval_metrics(
        queries, query_labels, reference=ref, reference_labels=ref_labels, backend=backend
    )
    expected = brute_force(queries, query_labels, ref=ref, ref_y=ref_labels)
    assert_matches(result, expected)
    assert result["retrieval/queries_skipped"] == 4
    assert result["retrieval/queries"] == len(queries) - 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_hand_worked_duplicates_and_ties(backend):
    # p0 and p1 coincide but have different labels; p2·p0 = p2·p1 = 0.8 (a tie).
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.8, 0.6], [0.6, 0.8]], dtype=np.float32)
    y = np.array([0, 1, 0, 1])
    result = retrieval_metrics(x, y, ks=(1, 2, 4), backend=backend)
    # q0: p1 (other label) is nearest although it duplicates q0; q1: p0 likewise;
    # q2: p3, then p0 before p1 (tie, lower index); q3: p2, p0, p1.
    assert result["precision@1"] == 0.0
    assert result["recall@2"] == 0.5  # q0 (p2 at rank 2) and q2 (p0 at rank 2)
    assert result["recall@4"] == 1.0  # K beyond the 3 candidates: all of them
    assert result["r_precision"] == 0.0 and result["map@r"] == 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_duplicates_of_the_query_are_retrieved(backend):
    x = np.repeat(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=np.float32), 12, axis=0)
    y = np.repeat([0, 1], 12)
    result = retrieval_metrics(x, y, backend=backend)
    for name in ("recall@1", "precision@1", "r_precision", "map@r", "knn_accuracy"):
        assert result[name] == 1.0, name


@pytest.mark.parametrize("backend", BACKENDS)
def test_singleton_classes_are_skipped_and_counted(blobs, backend):
    x, y = blobs
    y = y.copy()
    y[[0, 60, 120]] = [100, 101, 102]  # three single-sample classes
    result = retrieval_metrics(x, y, backend=backend)
    assert result["retrieval/queries_skipped"] == 3
    assert result["retrieval/queries"] == len(y) - 3
    assert_matches(result, brute_force(x, y))


def test_all_singletons_give_nan_with_every_query_skipped():
    x = np.eye(4, dtype=np.float32)
    result = retrieval_metrics(x, [0, 1, 2, 3])
    assert result["retrieval/queries_skipped"] == 4
    assert np.isnan(result["map@r"]) and np.isnan(result["recall@1"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_large_r_is_never_truncated_even_with_tiny_memory(make_clustered, backend):
    # Classes of 400 need 399 neighbours per query; a 1 MB budget forces many chunks.
    x, y = make_clustered(3, 400, 8, spread=0.9, seed=5)
    small = retrieval_metrics(x, y, backend=backend, memory_budget_mb=1)
    large = retrieval_metrics(x, y, backend=backend)
    assert small["retrieval/max_r"] == 399
    assert_matches(small, brute_force(x, y))
    assert_matches(small, large)


@pytest.mark.parametrize("backend", BACKENDS)
def test_separated_classes_score_one(make_clustered, backend):
    x, y = make_clustered(5, 20, 16, spread=0.01)
    result = retrieval_metrics(x, y, backend=backend)
    for name in ("recall@1", "recall@8", "precision@1", "r_precision", "map@r", "knn_accuracy"):
        assert result[name] == 1.0, name


def test_knn_vote_tie_goes_to_the_nearer_label():
    # Query 0's ten nearest alternate labels 1,2,1,2,... (5 each): label 1 is met first.
    angles = np.radians(np.arange(0, 11) * 2.0)
    x = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    y = np.array([1, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2])
    x = np.concatenate([x, [[-1.0, 0.0], [-1.0, 0.1]]]).astype(np.float32)
    y = np.concatenate([y, [2, 2]])
    assert knn_accuracy(x, y) == pytest.approx(brute_force(x, y)["knn_accuracy"], abs=1e-12)
    assert knn_accuracy(x[:11], y[:11], knn=10) == pytest.approx(
        brute_force(x[:11], y[:11])["knn_accuracy"], abs=1e-12
    )


def test_single_metric_functions_agree_with_the_full_result(blobs):
    x, y = blobs
    full = retrieval_metrics(x, y, ks=(1, 4))
    assert recall_at_k(x, y, 4) == full["recall@4"]
    assert precision_at_1(x, y) == full["precision@1"] == full["recall@1"]
    assert r_precision(x, y) == full["r_precision"]
    assert map_at_r(x, y) == full["map@r"]
    assert knn_accuracy(x, y) == full["knn_accuracy"]


def test_torch_tensors_give_the_same_numbers(blobs):
    x, y = blobs
    from_torch = retrieval_metrics(torch.from_numpy(x).double(), torch.from_numpy(y))
    assert from_torch == retrieval_metrics(x, y)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ks": (0,)}, "ks must be positive"),
        ({"knn": 0}, "knn must be a positive integer"),
        ({"reference": np.zeros((3, 4))}, "given together"),
        ({"backend": "gpu"}, "backend must be one of"),
    ],
)
def test_bad_options_are_rejected(blobs, options, message):
    x, y = blobs
    with pytest.raises(ValueError, match=message):
        retrieval_metrics(x, y, **options)


def _counting_cases(make_sparse_signs, make_clustered):
    """(name, x, y, options, tolerance) cases for the rank-counting path."""
    rng = np.random.default_rng(7)
    random_x = rng.normal(size=(300, 10)).astype(np.float32)  # crowded: partition bar
    integer_x = rng.integers(-3, 4, size=(160, 5)).astype(np.float32)
    clustered_x, clustered_y = make_clustered(3, 120, 8, spread=0.6, seed=8)
    return [
        ("random", random_x, rng.integers(0, 3, size=300), {}, 1e-6),
        ("clustered", clustered_x, clustered_y, {}, 1e-6),
        ("sign ties", make_sparse_signs(200, 8, seed=3), rng.integers(0, 4, size=200), {}, 1e-12),
        ("integer euclidean", integer_x, rng.integers(0, 3, size=160), {"normalize": False}, 1e-12),
    ]


@pytest.mark.parametrize("memory_budget_mb", [256.0, 0.05])
def test_rank_counting_matches_brute_force(
    monkeypatch, make_sparse_signs, make_clustered, memory_budget_mb
):
    # Every query through positive_ranks (normally only R > COUNTING_MIN_R), including
    # tiny blocks, exact pos/neg ties (index order) and rows crowded with negatives.
    from sphere_engine.metrics import retrieval

    monkeypatch.setattr(retrieval, "COUNTING_MIN_R", 0)
    for name, x, y, options, tolerance in _counting_cases(make_sparse_signs, make_clustered):
        result = retrieval_metrics(x, y, memory_budget_mb=memory_budget_mb, **options)
        assert_matches(result, brute_force(x, y, **options), tolerance), name


def test_rank_counting_with_a_reference_set(monkeypatch, blobs):
    from sphere_engine.metrics import retrieval

    monkeypatch.setattr(retrieval, "COUNTING_MIN_R", 0)
    x, y = blobs
    queries, query_labels = x[::3], y[::3].copy()
    query_labels[:4] = 99
    mask = np.ones(len(y), bool)
    mask[::3] = False
    result = retrieval_metrics(
        queries, query_labels, reference=x[mask], reference_labels=y[mask], ks=(1, 4)
    )
    expected = brute_force(queries, query_labels, ks=(1, 4), ref=x[mask], ref_y=y[mask])
    assert_matches(result, expected)
    assert result["retrieval/queries_skipped"] == 4


def test_rank_counting_hand_worked_duplicates(monkeypatch):
    from sphere_engine.metrics import retrieval

    monkeypatch.setattr(retrieval, "COUNTING_MIN_R", 0)
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.8, 0.6], [0.6, 0.8]], dtype=np.float32)
    result = retrieval_metrics(x, np.array([0, 1, 0, 1]), ks=(1, 2, 4))
    assert result["precision@1"] == 0.0 and result["recall@2"] == 0.5
    assert result["r_precision"] == 0.0 and result["map@r"] == 0.0


def test_rank_counting_with_rows_of_mixed_difficulty(monkeypatch):
    # Half the points sit tight around their class centre, half are noisy: within one
    # block the guessed threshold passes for some rows and must be lowered for others,
    # and the guess carried from block to block changes (tiny budget: many blocks).
    from sphere_engine.metrics import retrieval

    monkeypatch.setattr(retrieval, "COUNTING_MIN_R", 0)
    rng = np.random.default_rng(11)
    centres = rng.normal(size=(3, 8))
    y = np.repeat(np.arange(3), 150)
    spread = np.where(rng.random(y.size) < 0.5, 0.2, 2.0)[:, None]
    x = (centres[y] + spread * rng.normal(size=(y.size, 8))).astype(np.float32)
    for budget in (256.0, 0.3):
        result = retrieval_metrics(x, y, memory_budget_mb=budget)
        assert_matches(result, brute_force(x, y)), budget
    assert 0.3 < result["map@r"] < 0.95  # neither trivial nor random


def test_precision_sums_closed_form_matches_the_direct_sum():
    # Per row: candidates with c_j positives above them; n_m = #{j : c_j < m}; the
    # closed form over runs of equal n_m must equal Σ_{m + n_m ≤ R} m / (m + n_m).
    from sphere_engine.metrics.precision_sums import harmonic_numbers, precision_sums

    rng = np.random.default_rng(3)
    for r in (1, 2, 7, 60):
        counts = rng.integers(0, 2 * r + 2, size=40)
        counts[:2] = 0  # rows without candidates
        above = rng.integers(0, r + 1, size=counts.sum())
        hits, precision = precision_sums(counts, above, r, harmonic_numbers(r))
        start = 0
        for row, count in enumerate(counts):
            mine = above[start : start + count]
            start += count
            m = np.arange(1, r + 1)
            rank = m + (mine[None, :] < m[:, None]).sum(axis=1)
            inside = rank <= r
            assert hits[row] == inside.sum()
            assert precision[row] == pytest.approx((m / rank)[inside].sum(), abs=1e-12)


def test_rank_counting_on_crowded_rows_matches_brute_force(monkeypatch):
    # Random embeddings, 40 classes of 30: each row has far more than 2R negatives
    # above its threshold, so its candidates are cut at its R-th best negative.
    from sphere_engine.metrics import retrieval
    from sphere_engine.metrics.positive_ranks import counting

    monkeypatch.setattr(retrieval, "COUNTING_MIN_R", 0)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(1200, 6)).astype(np.float32)
    y = np.repeat(np.arange(40), 30)
    cut = []
    original = counting.below_the_bar

    def spy(counts, columns, values, r):
        cut.append(int((counts > 2 * r).sum()))
        return original(counts, columns, values, r)

    monkeypatch.setattr(counting, "below_the_bar", spy)  # where the counting looks it up
    assert_matches(retrieval_metrics(x, y), brute_force(x, y))
    assert sum(cut) > 100  # the bar was used
