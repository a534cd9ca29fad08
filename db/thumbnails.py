"""Small PNG images of a run's samples, keyed by the sample ids its per-query results
use (the explorer's strips, the projector's hover).

    <home>/runs/<run_id>/thumbnails/part-<n>.parquet   columns sample (int64), png (binary)
    <home>/runs/<run_id>/thumbnails/snapshot-<step>.parquet   column sample: the sample of
                                                        each point of that step's snapshot

A training run's evaluation writes the samples it is about to show (an evaluated
row's image, drawn once per run); the SDK's ``Run.log_samples`` writes the user's own
images under their sample ids. Each call appends one part, written atomically; a
sample written again is read from its newest part. Torch-free: images arrive as uint8
arrays (n × h × w × C, C 1 or 3, or n × h × w) and are kept as PNG bytes. Like every
module of ``db``, it takes the store's ``FileCatalogue`` (or the ``RunStore`` holding it).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from db.atomic import write_atomic
from db.file_catalogue import FileCatalogue, FileSource, catalogue_of

FOLDER = "thumbnails"
MAX_SIDE = 256  # pixels: a thumbnail, not a copy of the data set
_PART = re.compile(r"^part-(\d{6})\.parquet$")


def _folder(files: FileCatalogue, run_id: str) -> Path:
    return files.run_dir(run_id) / FOLDER


def _parts(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _PART.match(p.name))


def png_bytes(image: np.ndarray) -> bytes:
    """One uint8 image (h × w, or h × w × C with C 1 or 3) as PNG bytes."""
    pixels = np.asarray(image)
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(buffer, format="PNG")
    return buffer.getvalue()


def upscaled_png(png: bytes, at_least: int) -> bytes:
    """``png`` enlarged by a whole factor (nearest neighbour: each pixel a crisp block)
    until its shorter side is at least ``at_least`` pixels; as is when it already is."""
    with Image.open(io.BytesIO(png)) as image:
        factor = -(-at_least // max(1, min(image.size)))
        if factor <= 1:
            return png
        size = (image.width * factor, image.height * factor)
        buffer = io.BytesIO()
        image.resize(size, Image.Resampling.NEAREST).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def checked_images(
    samples: Sequence[int], images: object, what: str = "thumbnails"
) -> tuple[np.ndarray, np.ndarray]:
    """``samples`` as int64 ids and ``images`` as uint8 pixels; a one-line ValueError
    naming the field otherwise."""
    ids = np.asarray(samples)
    pixels = np.asarray(images)
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"{what}: samples must be a 1-D array of integer ids; got {ids!r}")
    if pixels.dtype != np.uint8 or pixels.ndim not in (3, 4) or len(pixels) != len(ids):
        raise ValueError(
            f"{what}: images must be uint8 of shape (n, h, w) or (n, h, w, C) with n = "
            f"{len(ids)} samples; got {pixels.dtype} {pixels.shape}"
        )
    if pixels.ndim == 4 and pixels.shape[3] not in (1, 3):
        raise ValueError(f"{what}: images need 1 or 3 channels; got {pixels.shape[3]}")
    if max(pixels.shape[1:3]) > MAX_SIDE:
        raise ValueError(
            f"{what}: images of at most {MAX_SIDE} pixels a side; got {pixels.shape[1:3]}"
        )
    return ids.astype(np.int64), pixels


def write_thumbnails(
    source: FileSource, run_id: str, samples: Sequence[int], images: object
) -> Path:
    """Append ``images`` of ``samples`` to the run's thumbnails; returns the part."""
    files = catalogue_of(source)
    if not files.exists(run_id):
        raise ValueError(f"run {run_id!r} does not exist in {files.home}")
    ids, pixels = checked_images(samples, images)
    table = pa.table(
        {
            "sample": pa.array(ids),
            "png": pa.array([png_bytes(image) for image in pixels], type=pa.binary()),
        }
    )
    folder = _folder(files, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    existing = _parts(folder)
    number = int(_PART.match(existing[-1].name).group(1)) + 1 if existing else 0  # type: ignore[union-attr]
    path = folder / f"part-{number:06d}.parquet"
    write_atomic(path, lambda temp: pq.write_table(table, temp))
    return path


def thumbnails(source: FileSource, run_id: str, samples: Sequence[int]) -> dict[int, bytes]:
    """PNG bytes of those ``samples`` the run has a thumbnail of (others are absent)."""
    wanted = {int(sample) for sample in samples}
    found: dict[int, bytes] = {}
    for part in _parts(_folder(catalogue_of(source), run_id)):  # oldest first: newer parts win
        try:
            table = pq.read_table(part)
        except (OSError, pa.ArrowInvalid) as error:
            raise ValueError(f"{part}: unreadable thumbnails ({error})") from None
        for sample, png in zip(
            table.column("sample").to_pylist(), table.column("png").to_pylist(), strict=True
        ):
            if sample in wanted:
                found[sample] = png
    return found


def has_thumbnails(source: FileSource, run_id: str) -> bool:
    return bool(_parts(_folder(catalogue_of(source), run_id)))


def _snapshot_path(files: FileCatalogue, run_id: str, step: int) -> Path:
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"step must be a non-negative integer; got {step!r}")
    return _folder(files, run_id) / f"snapshot-{int(step):010d}.parquet"


def write_snapshot_samples(
    source: FileSource, run_id: str, step: int, samples: Sequence[int]
) -> Path:
    """The sample id of each point of the snapshot at ``step`` (point i is ``samples[i]``),
    so the projector's hover finds each point's thumbnail."""
    files = catalogue_of(source)
    if not files.exists(run_id):
        raise ValueError(f"run {run_id!r} does not exist in {files.home}")
    ids = np.asarray(samples)
    if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
        raise ValueError(f"snapshot samples must be a 1-D array of integer ids; got {ids!r}")
    path = _snapshot_path(files, run_id, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"sample": pa.array(ids.astype(np.int64))})
    write_atomic(path, lambda temp: pq.write_table(table, temp))
    return path


def snapshot_samples(source: FileSource, run_id: str, step: int) -> np.ndarray | None:
    """The sample of each snapshot point at ``step``, or None when none was stored."""
    path = _snapshot_path(catalogue_of(source), run_id, step)
    if not path.is_file():
        return None
    try:
        return pq.read_table(path).column("sample").to_numpy()
    except (OSError, pa.ArrowInvalid, KeyError) as error:
        raise ValueError(f"{path}: unreadable snapshot samples ({error})") from None
