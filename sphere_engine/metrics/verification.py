"""Face-verification metrics (LFW / IJB style, SCIENCE.md §7) of an embedding set.

A pair's score is the cosine of its two L2-normalised embeddings; genuine pairs share
a class, impostor pairs do not (``verification_pairs.py`` says which pairs are used).
With a threshold t, a pair is accepted when its score ≥ t:

- FAR(t) = accepted impostor pairs / impostor pairs, TAR(t) = accepted genuine pairs /
  genuine pairs; the ROC is (FAR, TAR) at every distinct score, as
  ``sklearn.metrics.roc_curve(..., drop_intermediate=False)`` without its (0, 0) start;
- ``verification/auc``: the area under that ROC (ties count half, as ``roc_auc_score``);
- ``verification/tar@far=X``: the largest TAR whose FAR ≤ X (the smallest threshold
  with FAR ≤ X). With fewer than 10/X impostor pairs, FAR = X cannot be resolved and
  the value is NaN, never a number; ``verification/min_far`` (= 10 / impostor pairs)
  records the limit, and a warning (once per process for the same targets and pair
  count) names the unresolved targets;
- ``verification/eer``: where FAR = 1 − TAR, linearly interpolated between the two
  ROC points (including the start FAR = TAR = 0) where the sign of FAR − (1 − TAR)
  changes;
- ``verification/accuracy`` and ``verification/accuracy_std``: LFW protocol, 10 folds;
  for each fold the threshold that maximises accuracy on the other 9 folds (between
  two distinct scores, the highest on ties) decides the accuracy on this fold; mean
  and population std over folds. Folds are consecutive tenths of the given ``pairs``
  (LFW's ten sets when its pairs file is given in order), else a seeded random split.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from sphere_engine.metrics.inputs import check_embeddings, check_labels, l2_normalize
from sphere_engine.metrics.verification_pairs import (
    all_genuine_scores,
    check_pairs,
    cosine_scores,
    genuine_pairs,
    genuine_total,
    impostor_pairs,
)

logger = logging.getLogger(__name__)

FAR_TARGETS = (1e-1, 1e-2, 1e-3, 1e-4)
MAX_GENUINE_PAIRS = 1_000_000
MAX_IMPOSTOR_PAIRS = 1_000_000
FOLDS = 10
MIN_IMPOSTORS_PER_FAR = 10  # TAR@FAR=x needs at least 10/x impostor pairs
ROC_POINTS = 200


def far_key(far: float) -> str:
    """``verification/tar@far=1e-3`` style key of one FAR target."""
    return f"verification/tar@far={far:.0e}".replace("e-0", "e-").replace("e+0", "e+")


def _scored_pairs(
    embeddings: Any,
    labels: Any,
    pairs: Any,
    max_genuine_pairs: int,
    max_impostor_pairs: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, is_genuine, fold) of every evaluated pair, after the input checks."""
    for name, value in (
        ("max_genuine_pairs", max_genuine_pairs),
        ("max_impostor_pairs", max_impostor_pairs),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer; got {seed!r}")
    unit = l2_normalize(check_embeddings(embeddings))
    size = unit.shape[0]
    checked = None if labels is None else check_labels(labels, size)
    rng = np.random.default_rng(seed)
    if pairs is not None:
        a, b, genuine = check_pairs(pairs, size, checked)
        fold = np.arange(a.size) * FOLDS // a.size
    else:
        if checked is None:
            raise ValueError("labels are required unless pairs with an is_same column are given")
        ga, gb = genuine_pairs(checked, max_genuine_pairs, rng)
        ia, ib = impostor_pairs(checked, max_impostor_pairs, rng)
        a, b = np.concatenate([ga, ia]), np.concatenate([gb, ib])
        genuine = np.arange(a.size) < ga.size
        fold = rng.permutation(a.size) % FOLDS
    if genuine.all() or not genuine.any():
        raise ValueError(
            f"verification needs both genuine and impostor pairs; got {int(genuine.sum())} "
            f"genuine and {int((~genuine).sum())} impostor"
        )
    if pairs is None and ga.size == genuine_total(checked):
        scores = np.concatenate([all_genuine_scores(unit, checked), cosine_scores(unit, ia, ib)])
        return scores, genuine, fold
    return cosine_scores(unit, a, b), genuine, fold


def _roc(scores: np.ndarray, genuine: np.ndarray) -> tuple[np.ndarray, ...]:
    """(far, tar, thresholds, order, group_end) at every distinct score, descending.

    Only counts at the end of each group of equal scores are used, so the order inside
    a group does not matter and the fast unstable sort is enough.
    """
    order = np.argsort(scores)[::-1]
    ranked = scores[order]
    group_end = np.flatnonzero(ranked[1:] != ranked[:-1])  # last position of each score
    group_end = np.append(group_end, ranked.size - 1)
    true_accepts = np.cumsum(genuine[order], dtype=np.int64)[group_end]
    false_accepts = (group_end + 1) - true_accepts
    far = false_accepts / false_accepts[-1]
    tar = true_accepts / true_accepts[-1]
    return far, tar, ranked[group_end], order, group_end


def _eer(far: np.ndarray, tar: np.ndarray) -> float:
    far = np.concatenate([[0.0], far])
    frr = 1.0 - np.concatenate([[0.0], tar])
    crossed = int(np.argmax(far >= frr))  # far ends at 1 ≥ frr = 0, so one exists
    if crossed == 0:
        return float(far[0])
    gap_before = frr[crossed - 1] - far[crossed - 1]
    gap_after = far[crossed] - frr[crossed]
    u = gap_before / (gap_before + gap_after) if gap_before + gap_after > 0 else 0.0
    return float(far[crossed - 1] + u * (far[crossed] - far[crossed - 1]))


def _fold_accuracy(
    genuine: np.ndarray, fold: np.ndarray, order: np.ndarray, group_end: np.ndarray
) -> np.ndarray:
    """Accuracy on each fold at the threshold chosen on the other folds.

    With the pairs ranked by score, accepting the first i of a set is right for its
    genuine and wrong for its impostor pairs among them: correct(i) = impostors +
    cumsum(+1 genuine, −1 impostor) up to i, one pass per fold.
    """
    signs = np.where(genuine[order], 1, -1).astype(np.int8)
    ranked_fold = fold[order]

    def correct_at_each_threshold(selected: np.ndarray | None) -> np.ndarray:
        """Correct decisions among ``selected`` pairs for each threshold: above every
        score (all rejected), then at each distinct score."""
        chosen = signs if selected is None else np.where(selected, signs, np.int8(0))
        gain = np.cumsum(chosen, dtype=np.int64)[group_end]
        impostors = int((chosen == -1).sum())
        return np.concatenate([[impostors], impostors + gain])

    every = correct_at_each_threshold(None)

    def accuracy(f: int) -> float | None:
        in_fold = ranked_fold == f
        size = int(in_fold.sum())
        if size == 0:
            return None
        correct = correct_at_each_threshold(in_fold)
        best = int(np.argmax(every - correct))  # the other nine folds choose
        return correct[best] / size

    # Each fold is a few full-length numpy passes, which release the GIL: one thread per core.
    with ThreadPoolExecutor(max(1, min(os.cpu_count() or 1, FOLDS))) as pool:
        accuracies = [value for value in pool.map(accuracy, range(FOLDS)) if value is not None]
    return np.asarray(accuracies)


def verification_scores(
    embeddings: Any,
    labels: Any,
    *,
    pairs: Any = None,
    far_targets: Any = FAR_TARGETS,
    max_genuine_pairs: int = MAX_GENUINE_PAIRS,
    max_impostor_pairs: int = MAX_IMPOSTOR_PAIRS,
    seed: int = 0,
) -> dict[str, float]:
    """Verification metrics of N × d embeddings with N labels (see the module doc).

    ``pairs``: optional LFW-style P × 2 array of sample indices (genuine when their
    labels match) or P × 3 with an is_same 0/1 column (then ``labels`` may be None).
    Without it, all genuine pairs (at most ``max_genuine_pairs``) and
    ``max_impostor_pairs`` impostor pairs are drawn with ``seed``. Keys:
    ``verification/auc``, ``verification/eer``, ``verification/tar@far=1e-3`` (one
    per target), ``verification/accuracy``, ``verification/accuracy_std``,
    ``verification/genuine_pairs``, ``verification/impostor_pairs``,
    ``verification/min_far``.
    """
    targets = _check_far_targets(far_targets)
    scores, genuine, fold = _scored_pairs(
        embeddings, labels, pairs, max_genuine_pairs, max_impostor_pairs, seed
    )
    return _metrics(scores, genuine, fold, targets)


# (targets, impostor pairs) already warned about by this process: a training run
# evaluates the same split every few hundred steps and stores the limit with each
# evaluation (``verification/min_far``), so its log needs the warning once, not per
# evaluation. Each run trains in a fresh worker process: once per run.
_warned_unresolved: set[tuple[str, int]] = set()


def _warn_unresolved(targets: str, impostors: int) -> None:
    if (targets, impostors) in _warned_unresolved:
        return
    _warned_unresolved.add((targets, impostors))
    logger.warning(
        "TAR@FAR reported as NaN for FAR %s: %d impostor pairs resolve FAR ≥ %.1e only",
        targets,
        impostors,
        MIN_IMPOSTORS_PER_FAR / impostors,
    )


def _metrics(
    scores: np.ndarray, genuine: np.ndarray, fold: np.ndarray, targets: tuple[float, ...]
) -> dict[str, float]:
    far, tar, _, order, group_end = _roc(scores, genuine)
    impostors = int((~genuine).sum())
    widths = np.diff(np.concatenate([[0.0], far]))
    heights = (tar + np.concatenate([[0.0], tar[:-1]])) / 2
    result = {
        "verification/auc": float((widths * heights).sum()),
        "verification/eer": _eer(far, tar),
    }
    unresolved = []
    for target in targets:
        if impostors < MIN_IMPOSTORS_PER_FAR / target:
            result[far_key(target)] = float("nan")
            unresolved.append(f"{target:g}")
            continue
        allowed = np.flatnonzero(far <= target)
        result[far_key(target)] = float(tar[allowed[-1]]) if allowed.size else 0.0
    if unresolved:
        _warn_unresolved(", ".join(unresolved), impostors)
    accuracies = _fold_accuracy(genuine, fold, order, group_end)
    result["verification/accuracy"] = float(accuracies.mean())
    result["verification/accuracy_std"] = float(accuracies.std())
    result["verification/genuine_pairs"] = float(genuine.sum())
    result["verification/impostor_pairs"] = float(impostors)
    result["verification/min_far"] = MIN_IMPOSTORS_PER_FAR / impostors
    return result


def verification_roc(
    embeddings: Any,
    labels: Any,
    *,
    pairs: Any = None,
    max_points: int = ROC_POINTS,
    max_genuine_pairs: int = MAX_GENUINE_PAIRS,
    max_impostor_pairs: int = MAX_IMPOSTOR_PAIRS,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ROC downsampled for storage and a log-FAR plot: (far, tar, thresholds).

    Same pairs as ``verification_scores`` with the same arguments. Points are exact ROC
    points (no interpolation): for each of ``max_points`` FAR values spaced evenly in
    log scale from the smallest non-zero FAR to 1, the point with the largest TAR whose
    FAR is at most that value; duplicates are dropped, so at most ``max_points`` remain,
    ordered by increasing FAR. Points with FAR = 0 are left out (no log position).
    """
    _check_max_points(max_points)
    scores, genuine, _ = _scored_pairs(
        embeddings, labels, pairs, max_genuine_pairs, max_impostor_pairs, seed
    )
    return _downsampled_roc(scores, genuine, max_points)


def verification_scores_and_roc(
    embeddings: Any,
    labels: Any,
    *,
    pairs: Any = None,
    far_targets: Any = FAR_TARGETS,
    max_points: int = ROC_POINTS,
    max_genuine_pairs: int = MAX_GENUINE_PAIRS,
    max_impostor_pairs: int = MAX_IMPOSTOR_PAIRS,
    seed: int = 0,
) -> tuple[dict[str, float], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``verification_scores`` and ``verification_roc`` of the same arguments, the pairs
    drawn and scored once (what the training evaluation stores)."""
    targets = _check_far_targets(far_targets)
    _check_max_points(max_points)
    scores, genuine, fold = _scored_pairs(
        embeddings, labels, pairs, max_genuine_pairs, max_impostor_pairs, seed
    )
    return _metrics(scores, genuine, fold, targets), _downsampled_roc(scores, genuine, max_points)


def _check_max_points(max_points: Any) -> None:
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ValueError(f"max_points must be an integer ≥ 2; got {max_points!r}")


def _downsampled_roc(
    scores: np.ndarray, genuine: np.ndarray, max_points: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    far, tar, thresholds, _, _ = _roc(scores, genuine)
    smallest = far[far > 0].min()
    grid = np.geomspace(smallest, 1.0, max_points)
    picked = np.unique(np.searchsorted(far, grid * (1 + 1e-12), side="right") - 1)
    return far[picked], tar[picked], thresholds[picked]


def _check_far_targets(far_targets: Any) -> tuple[float, ...]:
    values = tuple(np.atleast_1d(np.asarray(far_targets, dtype=object)).tolist())
    if not values or any(
        isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < 1 for v in values
    ):
        raise ValueError(f"far_targets must be numbers in (0, 1); got {far_targets!r}")
    return tuple(sorted({float(v) for v in values}, reverse=True))
