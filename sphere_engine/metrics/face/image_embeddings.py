"""Embeddings keyed by image id, for the face protocols.

File: ``.npz`` with ``embeddings`` (N × d), ``ids`` (N image ids: strings, e.g.
``Aaron_Peirsol/Aaron_Peirsol_0001`` or ``1.jpg``, or integers) and optionally
``flipped`` (N × d, the embeddings of the horizontally flipped images, for the
flip-sum protocol). A protocol file naming ids the file lacks fails with the first
missing ids listed.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sphere_engine.metrics.inputs import check_embeddings

SHOWN_MISSING = 5


@dataclass(frozen=True)
class ImageEmbeddings:
    """N embeddings, their image ids, and optional flipped-image embeddings."""

    embeddings: np.ndarray  # (N, d) float32
    ids: np.ndarray  # (N,) str
    flipped: np.ndarray | None = None  # (N, d) float32
    source: str = "embeddings"

    def rows(self, wanted: np.ndarray, what: str) -> np.ndarray:
        """Row of each wanted id; ``what`` names the protocol file in the error."""
        problem = f"{what} names {{count}} image(s) without an embedding in {self.source}"
        return lookup_rows(self.ids, wanted, problem)

    def features(self, flip_sum: bool) -> np.ndarray:
        """The embeddings, or embedding + flipped embedding with ``flip_sum``."""
        if not flip_sum:
            return self.embeddings
        if self.flipped is None:
            raise ValueError(f"{self.source} has no 'flipped' array; flip-sum needs one")
        return self.embeddings + self.flipped


def lookup_rows(ids: np.ndarray, wanted: np.ndarray, problem: str) -> np.ndarray:
    """Row in ``ids`` of each wanted id; else ``problem`` (with ``{count}``) and the
    first missing ids."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    wanted = np.asarray(wanted).astype(str)
    position = np.clip(np.searchsorted(sorted_ids, wanted), 0, max(sorted_ids.size - 1, 0))
    found = sorted_ids.size > 0 and sorted_ids[position] == wanted
    found = np.broadcast_to(found, wanted.shape)
    if not found.all():
        missing = list(dict.fromkeys(wanted[~found].tolist()))
        raise ValueError(
            problem.replace("{count}", str(len(missing))) + f"; first: {missing[:SHOWN_MISSING]}"
        )
    return order[position]


def load_image_embeddings(path: str | Path) -> ImageEmbeddings:
    """Read an id-keyed ``.npz`` (module doc); errors name the file and the array."""
    path = Path(path)
    if path.suffix.lower() != ".npz" or not path.is_file():
        raise ValueError(f"image embeddings file {path} must be an existing .npz")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"image embeddings file {path}: unreadable ({error})") from None
    for name in ("embeddings", "ids"):
        if name not in arrays:
            raise ValueError(f"image embeddings file {path} lacks the array {name!r}")
    embeddings = check_embeddings(arrays["embeddings"], f"{path.name}: embeddings")
    ids = arrays["ids"].astype(str)
    if ids.shape != (embeddings.shape[0],):
        raise ValueError(
            f"{path}: ids has shape {ids.shape} but embeddings have {embeddings.shape[0]} rows"
        )
    if np.unique(ids).size != ids.size:
        raise ValueError(f"{path}: ids are not unique")
    flipped = None
    if "flipped" in arrays:
        flipped = check_embeddings(arrays["flipped"], f"{path.name}: flipped")
        if flipped.shape != embeddings.shape:
            raise ValueError(f"{path}: flipped has shape {flipped.shape}, not {embeddings.shape}")
    return ImageEmbeddings(embeddings, ids, flipped, str(path))
