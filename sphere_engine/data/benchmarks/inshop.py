"""In-Shop Clothes Retrieval: 3 997 train items; 3 985 test items evaluated query → gallery."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sphere_engine.data.benchmarks.listed_images import check_listed_images
from sphere_engine.data.benchmarks.official_layout import Listing, OfficialLayout
from sphere_engine.data.registry import DATASETS

_PARTS = ("train", "query", "gallery")


@DATASETS.register("inshop")
class InShop(OfficialLayout):
    """``data.root`` holds ``list_eval_partition.txt`` (at the root or in ``Eval/``) and
    the images its lines name (``img/...``): in ``img/`` at the root, or in ``Img/img/``
    as the release unpacks (``Img/img.zip`` extracted in ``Img/``). The test split is
    query + gallery; with
    ``evaluation.retrieval_protocol = "query_gallery"`` the queries are the official
    ones (the test dataset's ``is_query``), not a seeded fraction."""

    layout = "inshop"
    query_part = "query"

    def listing(self, root: Path) -> Listing:
        listed = self.marker(root, "list_eval_partition.txt")
        base = _image_base(listed.parent.parent if listed.parent.name == "Eval" else listed.parent)
        paths, items, parts = [], [], []
        for line in listed.read_text().splitlines()[2:]:
            fields = line.split()
            if len(fields) != 3 or fields[2] not in _PARTS:
                continue
            paths.append(base / fields[0])
            items.append(int(fields[1].removeprefix("id_")))
            parts.append(fields[2])
        check_listed_images(root, paths, listed.name)
        names = {item: f"id_{item:08d}" for item in items}
        return Listing(paths, np.array(items, dtype=np.int64), np.array(parts), names)


def _image_base(base: Path) -> Path:
    """The folder the listed ``img/...`` paths are relative to: ``base`` when it holds
    ``img/``, else ``base/Img`` (the release's layout) when that does."""
    if not (base / "img").is_dir() and (base / "Img" / "img").is_dir():
        return base / "Img"
    return base
