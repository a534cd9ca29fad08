"""Pairs-list verification (LFW, CFP-FP, AgeDB): 10-fold best-threshold accuracy.

Two file formats:

- LFW's ``pairs.txt``: a header ``<folds> <pairs per class per fold>``, then
  ``name n1 n2`` (same person) and ``name1 n1 name2 n2`` (different) lines; image ids
  are ``name/name_%04d`` (the LFW folder layout, without the extension);
- a plain list (CFP-FP / AgeDB as exported by insightface): ``image_a image_b same``
  with ``same`` 1 or 0; ``#`` starts a comment.

The pairs keep the file's order, and the folds are its 10 consecutive blocks (LFW's
folds), scored with ``verification_scores`` (threshold chosen on 9 folds, accuracy on
the 10th). ``flip_sum``: each image's embedding + its flipped image's embedding.
``convention="insightface"`` reads TAR@FAR at the nearest ROC point and the 10-fold
accuracy on insightface's squared-distance grid and folds (``conventions.py``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.metrics.face.conventions import (
    DEFAULT_CONVENTION,
    check_convention,
    grid_ten_fold_accuracy,
    nearest_roc_points,
)
from sphere_engine.metrics.face.image_embeddings import ImageEmbeddings
from sphere_engine.metrics.inputs import l2_normalize
from sphere_engine.metrics.verification import far_key, verification_scores


def _lfw_id(name: str, number: str) -> str:
    return f"{name}/{name}_{int(number):04d}"


def read_pairs_file(path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first ids, second ids, same) of every pair in file order (module doc)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"pairs file {path}: unreadable ({error})") from None
    rows = [(n, line.split("#", 1)[0].split()) for n, line in enumerate(lines, 1)]
    rows = [(n, fields) for n, fields in rows if fields]
    if not rows:
        raise ValueError(f"pairs file {path} has no pairs")
    lfw = len(rows[0][1]) == 2 and all(field.isdigit() for field in rows[0][1])
    first, second, same = [], [], []
    for number, fields in rows[1:] if lfw else rows:
        if lfw and len(fields) == 3:
            first.append(_lfw_id(fields[0], fields[1]))
            second.append(_lfw_id(fields[0], fields[2]))
            same.append(True)
        elif lfw and len(fields) == 4:
            first.append(_lfw_id(fields[0], fields[1]))
            second.append(_lfw_id(fields[2], fields[3]))
            same.append(False)
        elif not lfw and len(fields) == 3 and fields[2] in ("0", "1"):
            first.append(fields[0])
            second.append(fields[1])
            same.append(fields[2] == "1")
        else:
            expected = "'name n1 n2' or 'name1 n1 name2 n2'" if lfw else "'image_a image_b 0|1'"
            raise ValueError(f"pairs file {path}, line {number}: expected {expected}")
    return np.array(first), np.array(second), np.array(same)


def pairs_protocol_metrics(
    images: ImageEmbeddings,
    path: str | Path,
    *,
    flip_sum: bool = False,
    far_targets: tuple[float, ...] = (1e-2, 1e-3),
    convention: str = DEFAULT_CONVENTION,
) -> dict[str, float]:
    """Verification metrics of the pairs in ``path`` (``verification/accuracy`` is the
    10-fold best-threshold accuracy, ``verification/accuracy_std`` its spread; a
    TAR@FAR the impostor pairs cannot resolve is NaN)."""
    check_convention(convention)
    first, second, same = read_pairs_file(path)
    both = np.stack([first, second], axis=1).reshape(-1)  # missing ids in file order
    a, b = images.rows(both, f"pairs file {path}").reshape(-1, 2).T
    used = np.unique(np.concatenate([a, b]))
    features = images.features(flip_sum)[used]
    local = np.searchsorted(used, np.stack([a, b], axis=1))
    pairs = np.concatenate([local, same[:, None].astype(np.int64)], axis=1)
    metrics = verification_scores(features, None, pairs=pairs, far_targets=far_targets)
    if convention == "bounded":
        return metrics
    unit = l2_normalize(features).astype(np.float64)
    first_unit, second_unit = unit[local[:, 0]], unit[local[:, 1]]
    accuracy, spread = grid_ten_fold_accuracy(first_unit, second_unit, same)
    metrics["verification/accuracy"], metrics["verification/accuracy_std"] = accuracy, spread
    scores = (first_unit * second_unit).sum(axis=1)
    impostors = int((~same).sum())
    resolved = tuple(t for t in far_targets if int(impostors * t) >= 1)
    for target in far_targets:
        metrics[far_key(target)] = float("nan")
    for target, (tar, _) in zip(resolved, nearest_roc_points(scores, same, resolved), strict=True):
        metrics[far_key(target)] = tar
    metrics["verification/min_far"] = 1.0 / impostors
    return metrics
