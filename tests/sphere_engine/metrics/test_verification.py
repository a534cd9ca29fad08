"""verification_scores / verification_roc against scikit-learn and hand-checked values."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from sphere_engine.metrics import verification_roc, verification_scores
from sphere_engine.metrics.inputs import l2_normalize
from sphere_engine.metrics.verification_pairs import (
    _decode_triangular,
    cosine_scores,
    genuine_pairs,
    impostor_pairs,
)


def angle_pairs(genuine_scores, impostor_scores):
    """2-D unit embeddings whose pairs (2i, 2i+1) have exactly the given cosines."""
    scores = np.concatenate([genuine_scores, impostor_scores])
    angles = np.arccos(np.clip(scores, -1, 1))
    points = np.zeros((2 * scores.size, 2))
    points[0::2] = [1.0, 0.0]
    points[1::2] = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    same = np.arange(scores.size) < len(genuine_scores)
    pairs = np.stack([np.arange(0, 2 * scores.size, 2), np.arange(1, 2 * scores.size, 2)], 1)
    return points, np.column_stack([pairs, same.astype(int)])


def test_eer_and_tar_hand_checked():
    # thresholds 0.9 → FAR 0, TAR 1/3; 0.8 → 0, 2/3; 0.7 → 1/3, 2/3; 0.3 → 1/3, 1;
    # at 0.7 FAR = 1/3 = 1 − TAR: EER = 1/3. AUC: 8 of 9 genuine/impostor orderings right.
    points, pairs = angle_pairs([0.9, 0.8, 0.3], [0.7, 0.2, 0.1])
    result = verification_scores(points, None, pairs=pairs, far_targets=(0.5,))
    assert result["verification/eer"] == pytest.approx(1 / 3)
    assert result["verification/auc"] == pytest.approx(8 / 9)
    assert np.isnan(result["verification/tar@far=5e-1"])  # 3 impostors < 10 / 0.5
    assert result["verification/genuine_pairs"] == 3
    assert result["verification/impostor_pairs"] == 3


def test_eer_is_interpolated_between_roc_points():
    # FAR = 0 until the impostor at 0.5, where TAR jumps from 0 to... genuine 0.4 below:
    # points (0, 0) → (1, 0) [impostor 0.5] → (1, 1): FAR − FRR goes −1 → 0 at (1, 0)
    # with a single genuine and impostor, the crossing is the point (1, 0): EER = 1.
    points, pairs = angle_pairs([0.4], [0.5])
    assert verification_scores(points, None, pairs=pairs)["verification/eer"] == 1.0
    # two genuine 0.9/0.1 and two impostor 0.5/0.2: ROC (0,.5) (.5,.5) (1,.5) (1,1);
    # FRR − FAR: 0.5 at (0, .5), 0 at (.5, .5): EER = 0.5 exactly at a point
    points, pairs = angle_pairs([0.9, 0.1], [0.5, 0.2])
    assert verification_scores(points, None, pairs=pairs)["verification/eer"] == 0.5
    # genuine 0.9, 0.6, 0.1; impostor 0.5: ROC (0,1/3) (0,2/3) (1,2/3) (1,1); FRR − FAR
    # is 1/3 at (0, 2/3) and −2/3 at (1, 2/3): crossing 1/3 of the way, EER = 1/3
    points, pairs = angle_pairs([0.9, 0.6, 0.1], [0.5])
    assert verification_scores(points, None, pairs=pairs)["verification/eer"] == pytest.approx(
        1 / 3
    )


def scored(embeddings, labels, **options):
    """The pairs verification_scores uses, scored the same way (for sklearn)."""
    rng = np.random.default_rng(options.get("seed", 0))
    unit = l2_normalize(embeddings)
    ga, gb = genuine_pairs(labels, options.get("max_genuine_pairs", 10**6), rng)
    ia, ib = impostor_pairs(labels, options.get("max_impostor_pairs", 10**6), rng)
    a, b = np.concatenate([ga, ia]), np.concatenate([gb, ib])
    same = np.arange(a.size) < ga.size
    return cosine_scores(unit, a, b), same


@pytest.mark.parametrize("max_impostor_pairs", [5_000, 10**6])
def test_agrees_with_sklearn_roc(make_clustered, max_impostor_pairs):
    x, y = make_clustered(8, 40, 12, spread=0.6, seed=3)
    options = {"max_impostor_pairs": max_impostor_pairs, "max_genuine_pairs": 2_000}
    result = verification_scores(x, y, far_targets=(1e-1, 1e-2, 1e-3), **options)
    scores, same = scored(x, y, **options)
    assert result["verification/genuine_pairs"] == same.sum() == 2_000
    assert result["verification/impostor_pairs"] == (~same).sum()
    assert result["verification/auc"] == pytest.approx(roc_auc_score(same, scores), abs=1e-12)
    fpr, tpr, _ = roc_curve(same, scores, drop_intermediate=False)
    for target in (1e-1, 1e-2, 1e-3):
        key = f"verification/tar@far={target:.0e}".replace("e-0", "e-")
        if (~same).sum() < 10 / target:
            assert np.isnan(result[key])
        else:
            assert result[key] == pytest.approx(tpr[fpr <= target].max(), abs=1e-12)
    fnr = 1 - tpr
    crossing = np.argmax(fpr >= fnr)
    assert fpr[crossing - 1] <= result["verification/eer"] <= fpr[crossing]
    assert fnr[crossing] <= result["verification/eer"] <= fnr[crossing - 1]

    far, tar, thresholds = verification_roc(x, y, max_points=50, **options)
    assert 2 <= far.size <= 50 and np.all(np.diff(far) > 0) and np.all(np.diff(thresholds) < 0)
    assert far[0] == fpr[fpr > 0].min() and far[-1] == 1.0
    on_curve = {(f, t) for f, t in zip(fpr, tpr, strict=True)}
    assert all((f, t) in on_curve for f, t in zip(far, tar, strict=True))


def brute_force_fold_accuracy(scores, same, fold):
    accuracies = []
    for f in range(10):
        train, test = fold != f, fold == f
        candidates = np.concatenate([[np.inf], np.unique(scores)[::-1]])
        correct = [((scores[train] >= t) == same[train]).sum() for t in candidates]
        best = candidates[int(np.argmax(correct))]
        accuracies.append(((scores[test] >= best) == same[test]).mean())
    return np.mean(accuracies), np.std(accuracies)


def test_ten_fold_accuracy_on_lfw_style_pairs(make_clustered):
    x, y = make_clustered(10, 30, 8, spread=0.8, seed=5)
    rng = np.random.default_rng(1)
    pairs = rng.integers(0, y.size, size=(600, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    result = verification_scores(x, y, pairs=pairs)
    unit = l2_normalize(x)
    scores = cosine_scores(unit, pairs[:, 0], pairs[:, 1])
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    fold = np.arange(same.size) * 10 // same.size  # consecutive tenths, as LFW
    mean, std = brute_force_fold_accuracy(scores, same, fold)
    assert result["verification/accuracy"] == pytest.approx(mean)
    assert result["verification/accuracy_std"] == pytest.approx(std)
    assert 0.5 < mean < 1.0  # overlapping classes: neither trivial nor perfect


def test_nan_rule_and_seed_determinism(make_clustered, caplog):
    x, y = make_clustered(5, 20, 6, spread=0.5)
    with caplog.at_level(logging.WARNING):
        result = verification_scores(x, y, max_impostor_pairs=1000, seed=4)
    assert result["verification/impostor_pairs"] == 1000
    assert result["verification/tar@far=1e-1"] >= 0
    assert result["verification/tar@far=1e-2"] >= 0  # 1000 ≥ 10 / 0.01
    assert np.isnan(result["verification/tar@far=1e-3"])
    assert np.isnan(result["verification/tar@far=1e-4"])
    assert result["verification/min_far"] == pytest.approx(10 / 1000)
    assert "0.001, 0.0001" in caplog.text
    again = verification_scores(x, y, max_impostor_pairs=1000, seed=4)
    other = verification_scores(x, y, max_impostor_pairs=1000, seed=5)
    assert again.keys() == result.keys()
    assert all((np.isnan(v) and np.isnan(again[k])) or v == again[k] for k, v in result.items())
    assert other["verification/auc"] != result["verification/auc"]


def test_pair_sampling_is_exact_and_distinct():
    numbers = np.arange(200_000)
    i, j = _decode_triangular(numbers)
    assert np.all(i < j) and np.array_equal(j * (j - 1) // 2 + i, numbers)
    labels = np.repeat(np.arange(7), [1, 2, 3, 5, 8, 13, 21])
    rng = np.random.default_rng(0)
    a, b = genuine_pairs(labels, 10**6, rng)
    assert a.size == sum(n * (n - 1) // 2 for n in [1, 2, 3, 5, 8, 13, 21])
    assert np.all(labels[a] == labels[b]) and np.all(a != b)
    a, b = genuine_pairs(labels, 50, rng)
    assert a.size == 50 and len(set(zip(np.minimum(a, b), np.maximum(a, b), strict=True))) == 50
    a, b = impostor_pairs(labels, 300, rng)
    assert a.size == 300 and np.all(labels[a] != labels[b])
    assert len(set(zip(np.minimum(a, b), np.maximum(a, b), strict=True))) == 300


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"far_targets": (0.0,)}, "far_targets"),
        ({"far_targets": (1e-3, 2)}, "far_targets"),
        ({"max_impostor_pairs": 0}, "max_impostor_pairs"),
        ({"max_genuine_pairs": 1.5}, "max_genuine_pairs"),
        ({"pairs": np.zeros((3, 4), dtype=int)}, "pairs must be"),
        ({"pairs": np.array([[0, 99]])}, "outside"),
        ({"pairs": np.array([[0, 1, 2]])}, "is_same"),
        ({"pairs": np.array([[0.0, 1.0]])}, "integers"),
        ({"pairs": np.array([[0, 2], [1, 3]])}, "both genuine and impostor"),
    ],
)
def test_bad_input(options, message):
    x = np.eye(4, dtype=np.float32)
    with pytest.raises(ValueError, match=message):
        verification_scores(x, np.array([0, 1, 0, 1]), **options)


def test_labels_required_without_flagged_pairs():
    with pytest.raises(ValueError, match="labels are required"):
        verification_scores(np.eye(3), None)


def test_an_unresolved_far_is_warned_about_once_per_process_not_per_evaluation(
    make_clustered, caplog
):
    """A run evaluates the same split every few hundred steps; each result keeps the NaN
    and ``verification/min_far``, the log says it once."""
    x, y = make_clustered(5, 20, 6, spread=0.5)
    with caplog.at_level(logging.WARNING):
        for seed in range(3):
            result = verification_scores(x, y, max_impostor_pairs=997, seed=seed)
            assert np.isnan(result["verification/tar@far=1e-3"])
            assert result["verification/min_far"] == pytest.approx(10 / 997)
    assert caplog.text.count("TAR@FAR reported as NaN") == 1, caplog.text
