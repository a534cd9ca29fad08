"""IJB-B/C templates: the meta files and media-then-template pooling.

Files (the formats of the IJB release, as insightface's ``IJB_11.py`` reads them):

- template–media list (``ijbc_face_tid_mid.txt``): ``image template_id media_id``
  per line, whitespace separated;
- template pairs (``ijbc_template_pair_label.txt``): ``template_a template_b label``
  (1 genuine, 0 impostor);
- 1:N probe / gallery lists (``ijbc_1N_probe_mixed.csv``, ``ijbc_1N_gallery_G1.csv``):
  a header line, then ``TEMPLATE_ID,SUBJECT_ID,...`` (the first two columns are used).

Pooling (``template_features``): image embeddings are L2-normalised; the images of one
(template, media) pair are averaged (a video's frames count once together); a
template is the sum of its media means, L2-normalised.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.metrics.face.image_embeddings import ImageEmbeddings
from sphere_engine.metrics.inputs import l2_normalize


def _rows(path: Path, columns: int, what: str, delimiter: str | None = None, skip: int = 0):
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
        rows.append([field.strip() for field in fields[:columns]])
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


def read_template_subjects(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(template ids, subject ids) of a 1:N probe or gallery CSV (header skipped)."""
    path = Path(path)
    rows = _rows(path, 2, "1:N list", delimiter=",", skip=1)
    templates, subjects = (list(column) for column in zip(*rows, strict=True))
    return (
        _integers(templates, path, "1:N list", "TEMPLATE_ID"),
        _integers(subjects, path, "1:N list", "SUBJECT_ID"),
    )


def template_features(
    images: ImageEmbeddings,
    image_ids: np.ndarray,
    templates: np.ndarray,
    medias: np.ndarray,
    *,
    flip_sum: bool = False,
    source: str = "template-media list",
) -> tuple[np.ndarray, np.ndarray]:
    """(sorted template ids T, T × d unit template features) by media then template
    pooling (module doc); image rows are looked up by id (missing ids listed)."""
    rows = images.rows(image_ids, source)
    features = l2_normalize(images.features(flip_sum)[rows])
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
