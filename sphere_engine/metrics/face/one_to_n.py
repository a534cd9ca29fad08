"""1:N open-set identification: TPIR@FPIR of probes against a gallery + distractors.

Each probe template is searched against the gallery templates and the distractor
images (each its own gallery entry of no subject) for its single nearest entry
(exact, chunked: ``neighbors.py``). Mated probes (their subject is enrolled) count as
identified at threshold t when that nearest entry is of their subject and scores
above t; non-mated probes are false alarms when their nearest score is above t. For a
target FPIR f over m non-mated probes, t is the (⌊f·m⌋ + 1)-th highest non-mated score
(``bounded``) or the (⌊f·m⌋ − 1)-th (``insightface``, ``conventions.py``); targets with
⌊f·m⌋ = 0 are refused with that bound. ``ijb/rank1`` is the closed-set rank-1 rate of
the mated probes (no threshold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sphere_engine.metrics.face.conventions import (
    DEFAULT_CONVENTION,
    check_convention,
    threshold_rank,
)
from sphere_engine.metrics.face.one_to_one import far_key
from sphere_engine.metrics.neighbors import ranked_neighbors

FPIR_TARGETS = (1e-3, 1e-2, 1e-1)


@dataclass(frozen=True)
class NearestEntries:
    """Each probe's nearest gallery / distractor entry: what every threshold reads."""

    top_score: np.ndarray  # (P,) float64
    mated: np.ndarray  # (P,) bool: the probe's subject is enrolled
    correct: np.ndarray  # (P,) bool: mated and its nearest entry is of its subject
    gallery: int
    distractors: int


def nearest_entries(
    probes: np.ndarray,
    probe_subjects: np.ndarray,
    gallery: np.ndarray,
    gallery_subjects: np.ndarray,
    *,
    distractors: np.ndarray | None = None,
    backend: str = "auto",
) -> NearestEntries:
    """The nearest entry of unit P × d probes among a unit G × d gallery (and unit
    D × d distractors); subjects are integer ids."""
    reference, subjects = gallery, np.asarray(gallery_subjects, dtype=np.int64)
    if distractors is not None and distractors.shape[0]:
        reference = np.concatenate([gallery, distractors]).astype(np.float32)
        subjects = np.concatenate([subjects, np.full(distractors.shape[0], -1, dtype=np.int64)])
    top_score = np.empty(probes.shape[0], dtype=np.float64)
    top_subject = np.empty(probes.shape[0], dtype=np.int64)
    for chunk in ranked_neighbors(
        np.ascontiguousarray(probes, dtype=np.float32),
        np.ascontiguousarray(reference, dtype=np.float32),
        1,
        exclude_self=False,
        backend=backend,
    ):
        top_score[chunk.queries] = chunk.scores[:, 0]
        top_subject[chunk.queries] = subjects[chunk.indices[:, 0]]
    probe_subjects = np.asarray(probe_subjects, dtype=np.int64)
    mated = np.isin(probe_subjects, np.asarray(gallery_subjects))
    return NearestEntries(
        top_score,
        mated,
        mated & (top_subject == probe_subjects),
        int(gallery.shape[0]),
        0 if distractors is None else int(distractors.shape[0]),
    )


def tpir_at_fpir(
    nearest: NearestEntries,
    fpir_targets: tuple[float, ...] = FPIR_TARGETS,
    convention: str = DEFAULT_CONVENTION,
) -> dict[str, float]:
    """Counts, ``ijb/rank1`` and ``ijb/tpir@fpir=…`` per target (module doc)."""
    check_convention(convention)
    mated, correct, top_score = nearest.mated, nearest.correct, nearest.top_score
    if not mated.any():
        raise ValueError("1:N identification needs probes whose subject is in the gallery")
    nonmated_scores = np.sort(top_score[~mated])[::-1]
    count = nonmated_scores.size
    if fpir_targets and count == 0:
        raise ValueError(
            "TPIR@FPIR needs non-mated probes (subjects absent from the gallery); none given"
        )
    too_low = [t for t in fpir_targets if not 0 < t < 1 or int(count * t) < 1]
    if too_low:
        raise ValueError(
            f"FPIR targets {too_low} are below 1 / non-mated probes = {1.0 / count:.3g} "
            f"({count} non-mated probes): they cannot be measured here"
        )
    result = {
        "ijb/mated_probes": float(mated.sum()),
        "ijb/nonmated_probes": float(count),
        "ijb/gallery": float(nearest.gallery),
        "ijb/distractors": float(nearest.distractors),
        "ijb/rank1": float(correct[mated].mean()),
    }
    for target in fpir_targets:
        threshold = nonmated_scores[threshold_rank(count, target, convention)]
        result[f"ijb/tpir@fpir={far_key(target)}"] = float(
            (correct[mated] & (top_score[mated] > threshold)).mean()
        )
    return result


def identification_metrics(
    probes: np.ndarray,
    probe_subjects: np.ndarray,
    gallery: np.ndarray,
    gallery_subjects: np.ndarray,
    *,
    distractors: np.ndarray | None = None,
    fpir_targets: tuple[float, ...] = FPIR_TARGETS,
    backend: str = "auto",
    convention: str = DEFAULT_CONVENTION,
) -> dict[str, float]:
    """TPIR@FPIR per target and rank-1 of unit P × d probes against a unit G × d gallery
    (and unit D × d distractors); subjects are integer ids."""
    nearest = nearest_entries(
        probes, probe_subjects, gallery, gallery_subjects, distractors=distractors,
        backend=backend,
    )  # fmt: skip
    return tpir_at_fpir(nearest, fpir_targets, convention)
