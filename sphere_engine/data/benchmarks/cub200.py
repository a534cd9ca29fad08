"""CUB-200-2011: 11 788 bird images of 200 species; classes 1–100 train, 101–200 test."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.config.config_error import ConfigError
from sphere_engine.data.benchmarks.listed_images import check_listed_images
from sphere_engine.data.benchmarks.official_layout import Listing, OfficialLayout
from sphere_engine.data.registry import DATASETS

#: Classes up to this id train, the rest test (the DML protocol).
LAST_TRAIN_CLASS = 100


def _table(path: Path) -> dict[int, str]:
    """``<id> <value>`` lines → {id: value}."""
    rows = (line.split(maxsplit=1) for line in path.read_text().splitlines() if line.strip())
    return {int(key): value.strip() for key, value in rows}


@DATASETS.register("cub200")
class CUB200(OfficialLayout):
    """``data.root`` = the extracted ``CUB_200_2011`` folder (images.txt,
    image_class_labels.txt, classes.txt, images/). Class names from classes.txt."""

    layout = "cub200"

    def listing(self, root: Path) -> Listing:
        images = _table(self.marker(root, "images.txt"))
        labels = _table(self.marker(root, "image_class_labels.txt"))
        base = self.marker(root, "images.txt").parent
        classes_file = base / "classes.txt"
        names = _table(classes_file) if classes_file.is_file() else {}
        ids = sorted(images)
        missing = [i for i in ids if i not in labels]
        if missing:
            raise ConfigError(
                "data.root", f"image_class_labels.txt has no class for image {missing[0]}"
            )
        classes = np.array([int(labels[i]) for i in ids], dtype=np.int64)
        paths = [base / "images" / images[i] for i in ids]
        check_listed_images(root, paths, "images.txt")
        return Listing(
            paths=paths,
            labels=classes,
            parts=np.where(classes <= LAST_TRAIN_CLASS, "train", "test"),
            class_names={k: v.split(".", 1)[-1].replace("_", " ") for k, v in names.items()},
        )
