"""One call for ``spherescope analyze``'s face protocols, from the protocols' files.

``images``: the id-keyed embeddings (``image_embeddings.py``). Then any of:
``pairs`` (a pairs list), ``templates`` + ``matches`` (IJB 1:1), ``templates`` +
``probes`` + ``enrolled`` (IJB 1:N, with ``distractors``: another id-keyed file
whose every image is a distractor gallery entry). 1:1 reports every FAR of
``one_to_one.FAR_TARGETS`` the impostor count resolves (``ijb/min_far`` = 1 / impostor
pairs; the others are listed in ``unsupported``), 1:N likewise for FPIR.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.metrics.face.image_embeddings import load_image_embeddings
from sphere_engine.metrics.face.one_to_n import FPIR_TARGETS, identification_metrics
from sphere_engine.metrics.face.one_to_one import FAR_TARGETS, supported_targets, tar_at_far
from sphere_engine.metrics.face.pairs import pairs_protocol_metrics
from sphere_engine.metrics.face.templates import (
    read_template_media,
    read_template_pairs,
    read_template_subjects,
    template_features,
    template_rows,
)
from sphere_engine.metrics.inputs import l2_normalize

Path_ = str | Path


def face_protocol_metrics(
    images_path: Path_,
    *,
    pairs: Path_ | None = None,
    templates: Path_ | None = None,
    matches: Path_ | None = None,
    probes: Path_ | None = None,
    enrolled: Path_ | None = None,
    distractors: Path_ | None = None,
    flip_sum: bool = False,
) -> tuple[dict[str, float], list[str]]:
    """(metrics, notes on unsupported targets) of the protocols given (module doc)."""
    if (probes is None) != (enrolled is None):
        raise ValueError("1:N identification needs both --probes and --enrolled")
    if (matches is not None or probes is not None) and templates is None:
        raise ValueError("--matches and --probes need --templates (the template-media list)")
    if distractors is not None and probes is None:
        raise ValueError("--distractors is a 1:N gallery extension: give --probes and --enrolled")
    if pairs is None and matches is None and probes is None:
        raise ValueError("give --pairs, --templates with --matches, or --templates with --probes")
    images = load_image_embeddings(images_path)
    metrics: dict[str, float] = {}
    notes: list[str] = []
    if pairs is not None:
        metrics |= pairs_protocol_metrics(images, pairs, flip_sum=flip_sum)
    if templates is None:
        return metrics, notes
    image_ids, template_ids, media_ids = read_template_media(templates)
    known, features = template_features(
        images, image_ids, template_ids, media_ids, flip_sum=flip_sum,
        source=f"template-media list {templates}",
    )  # fmt: skip
    if matches is not None:
        a, b, genuine = read_template_pairs(matches)
        what = f"template pairs {matches}"
        rows_a, rows_b = template_rows(known, a, what), template_rows(known, b, what)
        scores = (features[rows_a] * features[rows_b]).sum(axis=1)
        impostors = int((~genuine).sum())
        usable, unsupported = supported_targets(impostors, FAR_TARGETS)
        metrics |= tar_at_far(scores, genuine, usable)
        metrics["ijb/min_far"] = 1.0 / max(impostors, 1)
        notes += [f"FAR {t:g}: unsupported with {impostors} impostor pairs" for t in unsupported]
    if probes is not None and enrolled is not None:
        probe_ids, probe_subjects = read_template_subjects(probes)
        gallery_ids, gallery_subjects = read_template_subjects(enrolled)
        probe_rows = template_rows(known, probe_ids, f"1:N list {probes}")
        gallery_rows = template_rows(known, gallery_ids, f"1:N list {enrolled}")
        extra = None
        if distractors is not None:
            extra = l2_normalize(load_image_embeddings(distractors).features(flip_sum))
        nonmated = int((~np.isin(probe_subjects, gallery_subjects)).sum())
        usable, unsupported = supported_targets(nonmated, FPIR_TARGETS)
        metrics |= identification_metrics(
            features[probe_rows], probe_subjects, features[gallery_rows], gallery_subjects,
            distractors=extra, fpir_targets=usable if nonmated else (),
        )  # fmt: skip
        notes += [f"FPIR {t:g}: unsupported with {nonmated} non-mated probes" for t in unsupported]
    return metrics, notes
