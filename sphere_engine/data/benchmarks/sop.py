"""Stanford Online Products: 120 053 images of 22 634 products (11 318 train, 11 316 test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.data.benchmarks.listed_images import check_listed_images
from sphere_engine.data.benchmarks.official_layout import Listing, OfficialLayout
from sphere_engine.data.registry import DATASETS


def _read_list(path: Path) -> tuple[list[str], list[int]]:
    """``image_id class_id super_class_id path`` lines after the header."""
    paths, classes = [], []
    for line in path.read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) == 4:
            classes.append(int(fields[1]))
            paths.append(fields[3])
    return paths, classes


@DATASETS.register("sop")
class SOP(OfficialLayout):
    """``data.root`` = the extracted ``Stanford_Online_Products`` folder (Ebay_train.txt,
    Ebay_test.txt and the category folders). Classes are named by their category folder
    and product id (``bicycle/111085122871``)."""

    layout = "sop"

    def listing(self, root: Path) -> Listing:
        paths, labels, parts, names = [], [], [], {}
        for part in ("train", "test"):
            listed = self.marker(root, f"Ebay_{part}.txt")
            rel_paths, classes = _read_list(listed)
            for rel, cls in zip(rel_paths, classes, strict=True):
                paths.append(listed.parent / rel)
                names.setdefault(cls, f"{rel.split('/')[0].removesuffix('_final')}/{cls}")
            labels += classes
            parts += [part] * len(classes)
        check_listed_images(root, paths, "Ebay_train.txt and Ebay_test.txt")
        return Listing(paths, np.array(labels, dtype=np.int64), np.array(parts), names)
