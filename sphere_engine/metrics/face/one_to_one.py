"""1:1 verification at low FAR: TAR@FAR from genuine and impostor scores.

``bounded`` (the default convention, ``conventions.py``): a pair is accepted when its
score is strictly above the threshold; for a target FAR f over n impostor pairs, the
threshold is the (⌊f·n⌋ + 1)-th highest impostor score, so at most ⌊f·n⌋ impostors are
accepted (fewer where scores tie): the largest TAR whose FAR is at most f.
``insightface``: the ROC point nearest f. Under both, a target below 1/n cannot be told
apart from FAR = 0 on n pairs and is refused with that bound; each result carries the
impostor count it rests on (``ijb/impostor_pairs``) and how many impostors were
accepted at each target.
"""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.face.conventions import (
    DEFAULT_CONVENTION,
    check_convention,
    nearest_roc_points,
    threshold_rank,
)

FAR_TARGETS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)


def far_key(far: float) -> str:
    return f"{far:.0e}".replace("e-0", "e-")


def supported_targets(count: int, targets: tuple[float, ...] = FAR_TARGETS):
    """(the targets resolvable with ``count`` impostor pairs or non-mated probes, those
    that are not: ⌊f·count⌋ = 0)."""
    return (
        tuple(t for t in targets if int(count * t) >= 1),
        tuple(t for t in targets if int(count * t) < 1),
    )


def needed_count(target: float) -> int:
    """The fewest impostor pairs (non-mated probes) that resolve ``target``."""
    count = int(np.ceil(1.0 / target))
    return count if int(count * target) >= 1 else count + 1


def tar_at_far(
    scores: np.ndarray,
    genuine: np.ndarray,
    far_targets: tuple[float, ...] = FAR_TARGETS,
    convention: str = DEFAULT_CONVENTION,
) -> dict[str, float]:
    """``ijb/tar@far=…`` per target, ``ijb/false_accepts@far=…``, the pair counts."""
    check_convention(convention)
    scores = np.asarray(scores, dtype=np.float64)
    genuine = np.asarray(genuine, dtype=bool)
    impostor_scores = np.sort(scores[~genuine])[::-1]
    count = impostor_scores.size
    if count == 0 or genuine.sum() == 0:
        raise ValueError(
            f"TAR@FAR needs genuine and impostor pairs; got {int(genuine.sum())} genuine "
            f"and {count} impostor"
        )
    too_low = [t for t in far_targets if not 0 < t < 1 or int(count * t) < 1]
    if too_low:
        raise ValueError(
            f"FAR targets {too_low} are below 1 / impostor pairs = {1.0 / count:.3g} "
            f"({count} impostor pairs): they cannot be measured here"
        )
    genuine_scores = scores[genuine]
    result = {"ijb/genuine_pairs": float(genuine_scores.size), "ijb/impostor_pairs": float(count)}
    nearest = (
        nearest_roc_points(scores, genuine, far_targets) if convention == "insightface" else []
    )
    for n, target in enumerate(far_targets):
        key = far_key(target)
        if convention == "insightface":
            tar, accepted = nearest[n]
        else:
            threshold = impostor_scores[threshold_rank(count, target, convention)]
            tar = float((genuine_scores > threshold).mean())
            accepted = int((impostor_scores > threshold).sum())
        result[f"ijb/tar@far={key}"] = tar
        result[f"ijb/false_accepts@far={key}"] = float(accepted)
    return result
