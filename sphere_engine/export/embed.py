"""Embeddings of a data set computed by an exported model (``spherescope embed``).

The model's metadata says what it expects; images are decoded and resized as a run
reads an image folder (``ImageFolderData``), scaled to [0, 1] and preprocessed from the
metadata alone. A dataset by name reads its test split as a run config would (name,
root, split, seed), its inputs brought back to pixels through its ``PixelRange``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.export.formats import ExportedModel, load_exported
from sphere_engine.export.preprocessing import preprocess

BATCH = 256


def embed_file_data(
    model_file: str | Path,
    data: str,
    *,
    data_root: str = "",
    split: str = "class_disjoint",
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """``embeddings`` (N × d float32), ``labels`` (N int64) and ``ids`` (N int64) of
    ``data``: an image folder (one sub-folder per class; ids are rows in sorted order)
    or a dataset name (its test split; ids are rows of that split)."""
    model = load_exported(model_file)
    folder = Path(data)
    if folder.is_dir():
        return _embed_folder(model, folder)
    return _embed_dataset(model, data, data_root, split, seed)


def _run(model: ExportedModel, batches) -> np.ndarray:
    preprocessing = model.metadata["preprocessing"]
    parts = [model.embed(preprocess(pixels, preprocessing)) for pixels in batches]
    return np.concatenate(parts).astype(np.float32, copy=False)


def _embed_folder(model: ExportedModel, folder: Path) -> dict[str, np.ndarray]:
    from sphere_engine.data.image_folder import _class_dirs, _scan
    from sphere_engine.data.image_folder_data import ImageFolderData

    preprocessing = model.metadata["preprocessing"]
    size = preprocessing.get("image_size")
    if not size or preprocessing["input_shape"][0] != 3:
        raise ValueError(
            f"{model.path}: the model takes {preprocessing['input_shape']} inputs, not RGB "
            "images; give a dataset name instead of a folder"
        )
    names = [path.name for path in _class_dirs(folder)]
    paths, labels = _scan(folder, {name: i for i, name in enumerate(names)})
    if not paths:
        raise ValueError(f"{folder}: no images under class sub-folders")
    images = ImageFolderData(paths, labels, int(size[0]))

    def batches():
        for start in range(0, len(paths), BATCH):
            rows = range(start, min(start + BATCH, len(paths)))
            yield np.stack([images.pixels(i).numpy() for i in rows]).astype(np.float32) / 255.0

    return {
        "embeddings": _run(model, batches()),
        "labels": np.asarray(labels, dtype=np.int64),
        "ids": np.arange(len(paths), dtype=np.int64),
    }


def _embed_dataset(
    model: ExportedModel, name: str, root: str, split: str, seed: int
) -> dict[str, np.ndarray]:
    from sphere_engine.data import DATASETS, create_dataset
    from sphere_engine.export.run_model import evaluated_pixels

    if name not in DATASETS.names():
        raise ValueError(
            f"{name!r} is neither a folder nor a dataset name (datasets: {DATASETS.names()})"
        )
    shape = model.metadata["preprocessing"]["input_shape"]
    takes_size = "image_size" in DATASETS.params(name) and len(shape) == 3
    options = {"image_size": shape[-1]} if takes_size else {}
    splits = create_dataset(name, root=root, split=split, seed=seed, **options)
    rows = np.arange(len(splits.test.labels), dtype=np.int64)
    return {
        "embeddings": _run(model, evaluated_pixels(splits, rows)),
        "labels": np.asarray(splits.test.labels, dtype=np.int64)[rows],
        "ids": rows,
    }
