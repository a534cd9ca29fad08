"""NMI, AMI and pairwise F1 from one table agree with scikit-learn's definitions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import adjusted_mutual_info_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix
from sklearn.metrics.cluster._expected_mutual_info_fast import expected_mutual_information

from sphere_engine.metrics import information
from sphere_engine.metrics.information import information_scores


def _pairwise_f1(true: np.ndarray, predicted: np.ndarray) -> float:
    """The definition, by enumerating pairs (small N only)."""
    upper = np.triu_indices(true.size, 1)
    same_label = (true[:, None] == true[None, :])[upper]
    same_cluster = (predicted[:, None] == predicted[None, :])[upper]
    both = np.sum(same_label & same_cluster)
    if both == 0:
        return 0.0
    precision, recall = both / same_cluster.sum(), both / same_label.sum()
    return float(2 * precision * recall / (precision + recall))


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    cases = []
    for _ in range(60):
        n, k, m = int(rng.integers(1, 200)), int(rng.integers(1, 12)), int(rng.integers(1, 12))
        cases.append((rng.integers(0, k, n) * 7 - 3, rng.integers(0, m, n)))  # sparse ids
    long_tail = rng.zipf(1.5, 1500) % 120  # many distinct class and cluster sizes
    cases.append((long_tail, (long_tail + (rng.random(1500) < 0.3) * 5) % 90))
    cases += [
        (np.zeros(5, int), np.zeros(5, int)),  # one class, one cluster: a perfect match
        (np.arange(5), np.zeros(5, int)),  # one cluster
        (np.zeros(5, int), np.arange(5)),  # one class
        (np.arange(40), np.arange(40)),  # singletons
        (np.array(list("aabbccdd")), np.array([0, 0, 1, 1, 2, 2, 2, 3])),  # string labels
    ]
    return cases


@pytest.mark.parametrize("case", range(len(_cases())))
def test_scores_equal_scikit_learn_and_the_pair_definition(case: int) -> None:
    true, predicted = _cases()[case]
    scores = information_scores(true, predicted)
    assert scores["nmi"] == pytest.approx(normalized_mutual_info_score(true, predicted), abs=1e-12)
    assert scores["ami"] == pytest.approx(adjusted_mutual_info_score(true, predicted), abs=1e-12)
    assert scores["f1"] == pytest.approx(_pairwise_f1(true, predicted), abs=1e-12)


def test_the_expected_mi_summed_by_sizes_equals_the_pair_by_pair_sum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Also in blocks of a few terms (the bound that keeps large tables in memory)."""
    rng = np.random.default_rng(1)
    true = np.repeat(np.arange(100), 100)  # one class size: the sum collapses to 1 × m
    predicted = np.where(rng.random(true.size) < 0.2, rng.integers(0, 100, true.size), true)
    table = information.contingency(true, predicted)
    reference = expected_mutual_information(
        contingency_matrix(true, predicted, sparse=True), 10_000
    )
    assert information.expected_mutual_information(table.a, table.b) == pytest.approx(
        reference, rel=1e-12
    )
    monkeypatch.setattr(information, "_EMI_BLOCK_TERMS", 50)
    assert information.expected_mutual_information(table.a, table.b) == pytest.approx(
        reference, rel=1e-12
    )
