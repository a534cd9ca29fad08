"""Cars196 (Stanford Cars): 16 185 images of 196 models; classes 1–98 train, 99–196 test."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.config.config_error import ConfigError
from sphere_engine.data.benchmarks.listed_images import check_listed_images
from sphere_engine.data.benchmarks.official_layout import Listing, OfficialLayout
from sphere_engine.data.registry import DATASETS

LAST_TRAIN_CLASS = 98


def _text(value) -> str:
    array = np.asarray(value)
    return str(array.item() if array.size == 1 else "".join(array.ravel().tolist()))


@DATASETS.register("cars196")
class Cars196(OfficialLayout):
    """``data.root`` holds ``cars_annos.mat`` and ``car_ims/`` (the official archive
    extracted); class names from the file's ``class_names``."""

    layout = "cars196"

    def listing(self, root: Path) -> Listing:
        from scipy.io import loadmat

        path = self.marker(root, "cars_annos.mat")
        try:
            mat = loadmat(str(path), squeeze_me=True)
            annotations = np.atleast_1d(mat["annotations"])
            rel_paths = [_text(a["relative_im_path"]) for a in annotations]
            classes = np.array([int(a["class"]) for a in annotations], dtype=np.int64)
        except (KeyError, ValueError, TypeError, OSError) as error:
            raise ConfigError(
                "data.root", f"{str(path)!r} is not a Cars196 annotation file ({error})"
            ) from None
        names = [_text(n) for n in np.atleast_1d(mat.get("class_names", []))]
        paths = [path.parent / p for p in rel_paths]
        check_listed_images(root, paths, path.name)
        return Listing(
            paths=paths,
            labels=classes,
            parts=np.where(classes <= LAST_TRAIN_CLASS, "train", "test"),
            class_names={i + 1: name for i, name in enumerate(names)},
        )
