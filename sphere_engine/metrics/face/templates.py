"""IJB-B/C templates: the meta files and media-then-template pooling.

Files (the formats of the IJB release, as insightface's ``IJB_11.py`` reads them):

- template–media list (``ijbc_face_tid_mid.txt``): ``image template_id media_id``
  per line, whitespace separated;
- template pairs (``ijbc_template_pair_label.txt``): ``template_a template_b label``
  (1 genuine, 0 impostor);
- 1:N probe / gallery lists (``ijbc_1N_probe_mixed.csv``, ``ijbc_1N_gallery_G1.csv``):
  a header line, then ``TEMPLATE_ID,SUBJECT_ID,...`` (the first two columns are used).
  The release lists one row per image (``...,FILENAME,...``): the rows are reduced to
  one entry per template, as insightface does (``np.unique(..., return_index=True)``);
  a template listed under two subjects is refused;
- detector scores (``ijbc_name_5pts_score.txt``): ``image x1 y1 ... x5 y5 score``, the
  face detector's score in the last column.

Pooling (``template_features``): image embeddings are L2-normalised (unless
``keep_norms``) and multiplied by their detector score (with ``detector_scores``), as
insightface's ``process_embeddings``; the images of one (template, media) pair are
averaged (a video's frames count once together); a template is the sum of its media
means, L2-normalised.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sphere_engine.metrics.face.image_embeddings import ImageEmbeddings, lookup_rows
from sphere_engine.metrics.inputs import l2_normalize


def _rows(
    path: Path,
    columns: int,
    what: str,
    delimiter: str | None = None,
    skip: int = 0,
    last: bool = False,
):
    """The first ``columns`` fields of each non-empty line (``last``: the first and
    the last field)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()[skip:]
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{what} {path}: unreadable ({error})") from None
    rows = []
    for number, line in enumerate(lines, 1 + skip):
        fields = line.split(delimiter) if delimiter else line.split()
        if not line.strip():
            continue
        if len(fields) < columns:
            raise ValueError(f"{what} {path}, line {number}: expected {columns} fields")
        kept = [fields[0], fields[-1]] if last else fields[:columns]
        rows.append([field.strip() for field in kept])
    if not rows:
        raise ValueError(f"{what} {path} is empty")
    return rows


def _integers(values: list[str], path: Path, what: str, column: str) -> np.ndarray:
    try:
        return np.array(values, dtype=np.int64)
    except ValueError:
        bad = next(value for value in values if not value.lstrip("-").isdigit())
        raise ValueError(f"{what} {path}: {column} {bad!r} is not an integer") from None


def read_template_media(path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(image ids, template ids, media ids) of a template–media list."""
    path = Path(path)
    rows = _rows(path, 3, "template-media list")
    images, templates, medias = (list(column) for column in zip(*rows, strict=True))
    what = "template-media list"
    return (
        np.array(images),
        _integers(templates, path, what, "template id"),
        _integers(medias, path, what, "media id"),
    )


def read_template_pairs(path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(template a, template b, genuine) of a template-pairs list."""
    path = Path(path)
    rows = _rows(path, 3, "template pairs")
    a, b, label = (list(column) for column in zip(*rows, strict=True))
    labels = _integers(label, path, "template pairs", "label")
    if not np.isin(labels, (0, 1)).all():
        raise ValueError(f"template pairs {path}: labels must be 0 or 1")
    what = "template pairs"
    return _integers(a, path, what, "template"), _integers(b, path, what, "template"), labels == 1


@dataclass(frozen=True)
class TemplateSubjects:
    """The templates of a 1:N list, one entry each, and the rows they came from."""

    templates: np.ndarray  # (T,) int64, sorted
    subjects: np.ndarray  # (T,) int64
    rows: int


def read_template_subjects(path: str | Path) -> TemplateSubjects:
    """One entry per template of a 1:N probe or gallery CSV (header skipped; module
    doc); a template under two subjects is refused, naming it and the line."""
    path = Path(path)
    rows = _rows(path, 2, "1:N list", delimiter=",", skip=1)
    templates, subjects = (list(column) for column in zip(*rows, strict=True))
    templates = _integers(templates, path, "1:N list", "TEMPLATE_ID")
    subjects = _integers(subjects, path, "1:N list", "SUBJECT_ID")
    unique, first, inverse = np.unique(templates, return_index=True, return_inverse=True)
    clash = np.flatnonzero(subjects != subjects[first][inverse.reshape(-1)])
    if clash.size:
        row = int(clash[0])
        raise ValueError(
            f"1:N list {path}: template {templates[row]} is listed under subjects "
            f"{subjects[first[inverse.reshape(-1)[row]]]} and {subjects[row]} "
            f"(data row {row + 1}); a template belongs to one subject"
        )
    return TemplateSubjects(unique, subjects[first], len(rows))


@dataclass(frozen=True)
class DetectorScores:
    """The face detector's score of each image (``*_name_5pts_score.txt``)."""

    ids: np.ndarray  # (N,) str
    scores: np.ndarray  # (N,) float64
    source: str

    def of(self, wanted: np.ndarray, what: str) -> np.ndarray:
        problem = f"{what} names {{count}} image(s) without a detector score in {self.source}"
        return self.scores[lookup_rows(self.ids, wanted, problem)]


def read_detector_scores(path: str | Path) -> DetectorScores:
    """Image id (first field) → score (last field) of a detector-score list."""
    path = Path(path)
    rows = _rows(path, 2, "detector scores", last=True)
    ids = np.array([image for image, _ in rows])
    scores = np.empty(ids.size, dtype=np.float64)
    for number, (image, score) in enumerate(rows):
        try:
            scores[number] = float(score)
        except ValueError:
            scores[number] = np.nan
        if not np.isfinite(scores[number]):
            raise ValueError(
                f"detector scores {path}: image {image!r}: score {score!r} (last column) "
                "is not a finite number"
            )
    if np.unique(ids).size != ids.size:
        raise ValueError(f"detector scores {path}: image ids are not unique")
    return DetectorScores(ids, scores, str(path))


def template_features(
    images: ImageEmbeddings,
    image_ids: np.ndarray,
    templates: np.ndarray,
    medias: np.ndarray,
    *,
    flip_sum: bool = False,
    keep_norms: bool = False,
    detector_scores: DetectorScores | None = None,
    source: str = "template-media list",
) -> tuple[np.ndarray, np.ndarray]:
    """(sorted template ids T, T × d unit template features) by media then template
    pooling (module doc); image rows are looked up by id (missing ids listed)."""
    rows = images.rows(image_ids, source)
    features = images.features(flip_sum)[rows].astype(np.float64)
    if not keep_norms:
        features = l2_normalize(features)
    if detector_scores is not None:
        features = features * detector_scores.of(image_ids, source)[:, None]
    # One id per (template, media) pair, then per template: sums by np.add.at.
    pair_keys, pair_of_image = np.unique(
        np.stack([templates, medias], 1), axis=0, return_inverse=True
    )
    pair_of_image = pair_of_image.reshape(-1)
    media_sum = np.zeros((pair_keys.shape[0], features.shape[1]), dtype=np.float64)
    np.add.at(media_sum, pair_of_image, features)
    media_mean = media_sum / np.bincount(pair_of_image)[:, None]
    template_ids, template_of_pair = np.unique(pair_keys[:, 0], return_inverse=True)
    pooled = np.zeros((template_ids.size, features.shape[1]), dtype=np.float64)
    np.add.at(pooled, template_of_pair.reshape(-1), media_mean)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    return template_ids, pooled.astype(np.float32)


def template_rows(known: np.ndarray, wanted: np.ndarray, what: str) -> np.ndarray:
    """Row of each wanted template id among the sorted ``known`` ones (missing listed)."""
    position = np.clip(np.searchsorted(known, wanted), 0, known.size - 1)
    found = known[position] == wanted
    if not found.all():
        missing = list(dict.fromkeys(wanted[~found].tolist()))
        raise ValueError(
            f"{what} names {len(missing)} template(s) absent from the template-media list; "
            f"first: {missing[:5]}"
        )
    return position
