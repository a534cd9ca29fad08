"""1:N open-set identification: TPIR@FPIR of probes against a gallery + distractors.

Each probe template is searched against the gallery templates and the distractor
images (each its own gallery entry of no subject) for its single nearest entry
(exact, chunked: ``neighbors.py``). Mated probes (their subject is enrolled) count as
identified at threshold t when that nearest entry is of their subject and scores
above t; non-mated probes are false alarms when their nearest score is above t. For a
target FPIR f over m non-mated probes, t is the (⌊f·m⌋ + 1)-th highest non-mated
score; targets below 1/m are refused with that bound. ``ijb/rank1`` is the
closed-set rank-1 rate of the mated probes (no threshold).
"""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.face.one_to_one import far_key
from sphere_engine.metrics.neighbors import ranked_neighbors

FPIR_TARGETS = (1e-3, 1e-2, 1e-1)


def identification_metrics(
    probes: np.ndarray,
    probe_subjects: np.ndarray,
    gallery: np.ndarray,
    gallery_subjects: np.ndarray,
    *,
    distractors: np.ndarray | None = None,
    fpir_targets: tuple[float, ...] = FPIR_TARGETS,
    backend: str = "auto",
) -> dict[str, float]:
    """TPIR@FPIR per target and rank-1 of unit P × d probes against a unit G × d gallery
    (and unit D × d distractors); subjects are integer ids."""
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
    correct = mated & (top_subject == probe_subjects)
    nonmated_scores = np.sort(top_score[~mated])[::-1]
    count = nonmated_scores.size
    result = {
        "ijb/mated_probes": float(mated.sum()),
        "ijb/nonmated_probes": float(count),
        "ijb/gallery": float(gallery.shape[0]),
        "ijb/distractors": float(0 if distractors is None else distractors.shape[0]),
        "ijb/rank1": float(correct[mated].mean()) if mated.any() else float("nan"),
    }
    if not mated.any():
        raise ValueError("1:N identification needs probes whose subject is in the gallery")
    if fpir_targets and count == 0:
        raise ValueError(
            "TPIR@FPIR needs non-mated probes (subjects absent from the gallery); none given"
        )
    too_low = [t for t in fpir_targets if not 0 < t < 1 or t < 1.0 / max(count, 1)]
    if too_low:
        raise ValueError(
            f"FPIR targets {too_low} are below 1 / non-mated probes = {1.0 / count:.3g} "
            f"({count} non-mated probes): they cannot be measured here"
        )
    for target in fpir_targets:
        threshold = nonmated_scores[int(np.floor(target * count))]
        result[f"ijb/tpir@fpir={far_key(target)}"] = float(
            (correct[mated] & (top_score[mated] > threshold)).mean()
        )
    return result
