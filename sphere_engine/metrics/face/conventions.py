"""Two conventions for reading a threshold off scores, by name (SCIENCE.md §10).

- ``bounded`` (the default): TAR@FAR is the largest TAR whose FAR is at most f (the
  threshold is the (⌊f·m⌋ + 1)-th highest of m impostor scores, accept: score > t);
  TPIR@FPIR likewise allows ⌊f·m⌋ false alarms among m non-mated probes; the 10-fold
  accuracy chooses its threshold between two distinct scores (``verification.py``).
- ``insightface``: as its evaluation scripts compute it. TAR@FAR is read at the ROC
  point nearest f (``ijb_11.py``: ``sklearn.metrics.roc_curve`` then ``argmin |fpr - f|``
  over the flipped curve, so the last of tied points; accept: score ≥ t); TPIR@FPIR
  takes the (⌊f·m⌋ − 1)-th highest non-mated score, accept: score > t (``ijb_evals.py``);
  the 10-fold accuracy searches squared distances on the grid 0, 0.01, …, 3.99 (accept:
  distance < t; the first best threshold), folds as ``KFold(10)`` (``verification.py``).

Under both, a target f with ⌊f·m⌋ = 0 is unsupported: it cannot be told from FAR = 0.
"""

from __future__ import annotations

import numpy as np

CONVENTIONS = ("bounded", "insightface")
DEFAULT_CONVENTION = "bounded"
FOLDS = 10
DISTANCE_GRID = np.arange(0, 4, 0.01)


def check_convention(name: str) -> str:
    if name not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}; got {name!r}")
    return name


def other_convention(name: str) -> str:
    return next(c for c in CONVENTIONS if c != name)


def alternative_key(key: str, convention: str) -> str:
    """``ijb/tar@far=1e-4`` read with ``convention`` → ``ijb/insightface/tar@far=1e-4``."""
    family, _, rest = key.partition("/")
    return f"{family}/{convention}/{rest}"


def threshold_rank(count: int, target: float, convention: str) -> int:
    """Position, in the m = ``count`` scores sorted descending, of the threshold for a
    target rate ``target`` (accept: score > threshold)."""
    allowed = int(count * target)
    return allowed if convention == "bounded" else max(allowed - 1, 0)


def nearest_roc_points(
    scores: np.ndarray, genuine: np.ndarray, targets: tuple[float, ...]
) -> list[tuple[float, int]]:
    """(TAR, accepted impostors) at the ROC point nearest FAR = each target, the ROC as
    ``sklearn.metrics.roc_curve`` draws it (ties grouped, collinear points dropped,
    a (0, 0) start), the last point on ties (insightface flips the curve first); the
    scores are sorted once for all targets (unstably: only the counts at the end of each
    group of equal scores are read)."""
    order = np.argsort(-scores)
    ranked, labels = scores[order], genuine[order]
    ends = np.r_[np.flatnonzero(np.diff(ranked)), ranked.size - 1]
    true_accepts = np.cumsum(labels, dtype=np.int64)[ends]
    false_accepts = 1 + ends - true_accepts
    if false_accepts.size > 2:
        bends = np.r_[
            True,
            np.logical_or(np.diff(false_accepts, 2), np.diff(true_accepts, 2)),
            True,
        ]
        true_accepts, false_accepts = true_accepts[bends], false_accepts[bends]
    true_accepts = np.r_[0, true_accepts]
    false_accepts = np.r_[0, false_accepts]
    far = false_accepts / false_accepts[-1]
    tar = true_accepts / true_accepts[-1]
    points = []
    for target in targets:
        point = far.size - 1 - int(np.argmin(np.abs(far[::-1] - target)))
        points.append((float(tar[point]), int(false_accepts[point])))
    return points


def kfold_of(count: int, folds: int = FOLDS) -> np.ndarray:
    """Fold of each of ``count`` pairs in order, as ``sklearn.model_selection.KFold``
    without shuffling: consecutive blocks, the first ``count % folds`` one longer."""
    if count < folds:
        raise ValueError(f"{folds}-fold accuracy needs at least {folds} pairs; got {count}")
    sizes = np.full(folds, count // folds)
    sizes[: count % folds] += 1
    return np.repeat(np.arange(folds), sizes)


def grid_ten_fold_accuracy(
    first: np.ndarray, second: np.ndarray, same: np.ndarray
) -> tuple[float, float]:
    """(mean, population std) over folds of insightface's 10-fold accuracy of pairs of
    unit embeddings (module doc)."""
    distance = np.sum(np.square(np.subtract(first, second, dtype=np.float64)), 1)
    fold = kfold_of(distance.size)
    same = np.asarray(same, dtype=bool)

    def correct(selected: np.ndarray) -> np.ndarray:
        """Right decisions among ``selected`` pairs at each grid threshold."""
        genuine = np.sort(distance[selected & same])
        impostor = np.sort(distance[selected & ~same])
        accepted_genuine = np.searchsorted(genuine, DISTANCE_GRID, side="left")
        rejected_impostor = impostor.size - np.searchsorted(impostor, DISTANCE_GRID, side="left")
        return accepted_genuine + rejected_impostor

    accuracies = []
    for f in range(FOLDS):
        test = fold == f
        train_correct = correct(~test) / int((~test).sum())
        best = int(np.argmax(train_correct))
        accuracies.append(correct(test)[best] / int(test.sum()))
    return float(np.mean(accuracies)), float(np.std(accuracies))


CONVENTION_KEYS = (
    "ijb/tar@far=",
    "ijb/false_accepts@far=",
    "ijb/tpir@fpir=",
    "verification/tar@far=",
    "verification/accuracy",
    "verification/min_far",
)


def depends_on_convention(key: str) -> bool:
    """Whether the value of metric ``key`` changes with the convention."""
    return key.startswith(CONVENTION_KEYS)
