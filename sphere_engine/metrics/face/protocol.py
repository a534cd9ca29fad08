"""One call for ``spherescope analyze``'s face protocols, from the protocols' files.

``images``: the id-keyed embeddings (``image_embeddings.py``). Then any of:
``pairs`` (a pairs list), ``templates`` + ``matches`` (IJB 1:1), ``templates`` +
``probes`` + ``enrolled`` (IJB 1:N, with ``distractors``: another id-keyed file
whose every image is a distractor gallery entry). 1:1 reports every FAR of
``one_to_one.FAR_TARGETS`` the impostor count resolves (``ijb/min_far`` = 1 / impostor
pairs; the others are listed in the notes), 1:N likewise for FPIR; a protocol whose
every target is unresolvable is refused, saying how many pairs / probes each needs.

``convention`` (``conventions.py``) names how thresholds are read; the values of the
other convention are returned too, under ``ijb/<other>/tar@far=…`` (and likewise for
every key ``depends_on_convention``), so both can be shown side by side.
``keep_norms`` / ``detector_scores`` are insightface's feature modes of template
pooling (``templates.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sphere_engine.metrics.face.conventions import (
    DEFAULT_CONVENTION,
    alternative_key,
    check_convention,
    depends_on_convention,
    other_convention,
)
from sphere_engine.metrics.face.image_embeddings import load_image_embeddings
from sphere_engine.metrics.face.one_to_n import FPIR_TARGETS, nearest_entries, tpir_at_fpir
from sphere_engine.metrics.face.one_to_one import (
    FAR_TARGETS,
    needed_count,
    supported_targets,
    tar_at_far,
)
from sphere_engine.metrics.face.pairs import pairs_protocol_metrics
from sphere_engine.metrics.face.templates import (
    read_detector_scores,
    read_template_media,
    read_template_pairs,
    read_template_subjects,
    template_features,
    template_rows,
)
from sphere_engine.metrics.inputs import l2_normalize
from sphere_engine.metrics.verification import MIN_IMPOSTORS_PER_FAR

Path_ = str | Path


@dataclass
class FaceAnalysis:
    """Metrics, notes on what could not be measured, and what was used (counts)."""

    metrics: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)

    def add(self, convention: str, read: Callable[[str], dict[str, float]]) -> None:
        """``read(convention)``'s metrics, and the other convention's values of the
        convention-dependent keys under their alternative keys."""
        self.metrics |= read(convention)
        other = other_convention(convention)
        self.metrics |= {
            alternative_key(key, other): value
            for key, value in read(other).items()
            if depends_on_convention(key)
        }


def _unmeasurable(what: str, count: int, noun: str, targets: tuple[float, ...]) -> ValueError:
    needs = ", ".join(f"{t:g} needs {needed_count(t):,}" for t in targets)
    return ValueError(f"no {what} target is measurable with {count:,} {noun}: {needs}")


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
    keep_norms: bool = False,
    detector_scores: Path_ | None = None,
    convention: str = DEFAULT_CONVENTION,
) -> FaceAnalysis:
    """The metrics of the protocols given (module doc)."""
    check_convention(convention)
    if (probes is None) != (enrolled is None):
        raise ValueError("1:N identification needs both --probes and --enrolled")
    if (matches is not None or probes is not None) and templates is None:
        raise ValueError("--matches and --probes need --templates (the template-media list)")
    if distractors is not None and probes is None:
        raise ValueError("--distractors is a 1:N gallery extension: give --probes and --enrolled")
    if (keep_norms or detector_scores is not None) and templates is None:
        raise ValueError(
            "--keep-norms and --detector-scores shape template pooling: give --templates"
        )
    if pairs is None and matches is None and probes is None:
        raise ValueError("give --pairs, --templates with --matches, or --templates with --probes")
    images = load_image_embeddings(images_path)
    result = FaceAnalysis()
    if pairs is not None:
        result.add(convention, lambda c: pairs_protocol_metrics(
            images, pairs, flip_sum=flip_sum, convention=c
        ))  # fmt: skip
        result.notes += _unresolved_pairs_notes(result.metrics, convention)
    if templates is None:
        return result
    scores = None if detector_scores is None else read_detector_scores(detector_scores)
    image_ids, template_ids, media_ids = read_template_media(templates)
    known, features = template_features(
        images, image_ids, template_ids, media_ids, flip_sum=flip_sum, keep_norms=keep_norms,
        detector_scores=scores, source=f"template-media list {templates}",
    )  # fmt: skip
    if matches is not None:
        _one_to_one(result, known, features, matches, convention)
    if probes is not None and enrolled is not None:
        extra = None
        if distractors is not None:
            extra = l2_normalize(load_image_embeddings(distractors).features(flip_sum))
        _one_to_n(result, known, features, probes, enrolled, extra, convention)
    return result


def _unresolved_pairs_notes(metrics: dict[str, float], convention: str) -> list[str]:
    """Why each TAR@FAR of the pairs protocol is NaN (null in the JSON): ``bounded``
    reads it only with 10 / FAR impostor pairs (``verification.py``), ``insightface``
    with 1 / FAR."""
    impostors = int(metrics["verification/impostor_pairs"])
    notes = []
    for key, value in sorted(metrics.items()):
        if not (key.startswith("verification/") and "tar@far=" in key and np.isnan(value)):
            continue
        named, _, target = key.removeprefix("verification/").partition("tar@far=")
        far = float(target)
        if (named.strip("/") or convention) == "insightface":
            needed = needed_count(far)
        else:
            needed = int(np.ceil(MIN_IMPOSTORS_PER_FAR / far))
        notes.append(f"{key}: null ({impostors:,} impostor pairs; this FAR needs {needed:,})")
    return notes


def _one_to_one(result: FaceAnalysis, known, features, matches: Path_, convention: str) -> None:
    a, b, genuine = read_template_pairs(matches)
    what = f"template pairs {matches}"
    rows_a, rows_b = template_rows(known, a, what), template_rows(known, b, what)
    scores = (features[rows_a] * features[rows_b]).sum(axis=1)
    impostors = int((~genuine).sum())
    usable, unsupported = supported_targets(impostors, FAR_TARGETS)
    if not usable:
        raise _unmeasurable("FAR", impostors, "impostor pairs", FAR_TARGETS)
    result.add(convention, lambda c: tar_at_far(scores, genuine, usable, c))
    result.metrics["ijb/min_far"] = 1.0 / impostors
    result.notes += [
        f"FAR {t:g}: unsupported with {impostors} impostor pairs (needs {needed_count(t):,})"
        for t in unsupported
    ]
    result.used.append(
        f"1:1: {int(genuine.sum()):,} genuine and {impostors:,} impostor template pairs "
        f"over {np.unique(np.concatenate([a, b])).size:,} templates"
    )


def _one_to_n(result: FaceAnalysis, known, features, probes, enrolled, extra, convention) -> None:
    probe_list, gallery_list = read_template_subjects(probes), read_template_subjects(enrolled)
    probe_rows = template_rows(known, probe_list.templates, f"1:N list {probes}")
    gallery_rows = template_rows(known, gallery_list.templates, f"1:N list {enrolled}")
    nearest = nearest_entries(
        features[probe_rows], probe_list.subjects, features[gallery_rows],
        gallery_list.subjects, distractors=extra,
    )  # fmt: skip
    nonmated = int((~nearest.mated).sum())
    usable, unsupported = supported_targets(nonmated, FPIR_TARGETS)
    if not usable:
        raise _unmeasurable("FPIR", nonmated, "non-mated probes", FPIR_TARGETS)
    result.add(convention, lambda c: tpir_at_fpir(nearest, usable, c))
    result.notes += [
        f"FPIR {t:g}: unsupported with {nonmated} non-mated probes (needs {needed_count(t):,})"
        for t in unsupported
    ]
    result.used.append(
        f"1:N: {int(nearest.mated.sum()):,} mated and {nonmated:,} non-mated probe templates "
        f"(from {probe_list.rows:,} rows of {Path(probes).name}), "
        f"{gallery_list.templates.size:,} gallery templates (from {gallery_list.rows:,} rows "
        f"of {Path(enrolled).name}), {nearest.distractors:,} distractors"
    )
