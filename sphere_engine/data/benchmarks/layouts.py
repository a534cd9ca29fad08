"""Which dataset layout a folder is in, told by the files that mark each layout."""

from __future__ import annotations

from pathlib import Path

#: Layout name → files (relative to the root) that identify it; the first that is
#: present names the layout a wrong ``data.root`` is in.
MARKERS: dict[str, tuple[str, ...]] = {
    "cub200": ("images.txt", "image_class_labels.txt"),
    "cars196": ("cars_annos.mat",),
    "sop": ("Ebay_train.txt", "Ebay_test.txt"),
    "inshop": ("list_eval_partition.txt",),
    "cifar10": ("cifar-10-batches-py",),
    "cifar100": ("cifar-100-python",),
}
#: Where a marker may also sit (the official In-Shop zip keeps its lists in Eval/).
SUBFOLDERS = ("", "Eval", "CUB_200_2011", "Stanford_Online_Products")


def find_marker(root: Path, name: str) -> Path | None:
    for sub in SUBFOLDERS:
        path = root / sub / name
        if path.exists():
            return path
    return None


def detect_layout(root: Path) -> str | None:
    """The layout ``root`` is in (all of its markers present), or None."""
    for layout, markers in MARKERS.items():
        if all(find_marker(root, marker) for marker in markers):
            return layout
    if root.is_dir() and any(p.is_dir() and not p.name.startswith(".") for p in root.iterdir()):
        return "image_folder"
    return None
