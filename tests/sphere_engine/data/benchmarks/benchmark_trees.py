"""Tiny trees in each benchmark's official layout (a few 12×10 images per class)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image


def image(path: Path, seed: int) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.default_rng(seed).integers(0, 255, (10, 12, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path)
    return str(path)


def cub_tree(root: Path, classes: int = 200, per_class: int = 2) -> Path:
    images, labels, names = [], [], []
    for cls in range(1, classes + 1):
        name = f"{cls:03d}.Bird_{cls}"
        names.append(f"{cls} {name}")
        for k in range(per_class):
            index = len(images) + 1
            rel = f"{name}/img_{k}.jpg"
            image(root / "images" / rel, index)
            images.append(f"{index} {rel}")
            labels.append(f"{index} {cls}")
    for file, lines in (("images", images), ("image_class_labels", labels), ("classes", names)):
        (root / f"{file}.txt").write_text("\n".join(lines) + "\n")
    return root


def cars_tree(root: Path, classes: int = 196, per_class: int = 1) -> Path:
    from scipy.io import savemat

    dtype = [("relative_im_path", "O"), ("class", "O"), ("test", "O")]
    rows = []
    for cls in range(1, classes + 1):
        for k in range(per_class):
            rel = f"car_ims/{len(rows) + 1:06d}.jpg"
            image(root / rel, len(rows))
            rows.append((rel, cls, k % 2))
    annotations = np.array(rows, dtype=dtype)
    names = np.array([f"Maker Model {c} 2012" for c in range(1, classes + 1)], dtype=object)
    savemat(str(root / "cars_annos.mat"), {"annotations": annotations, "class_names": names})
    return root


def sop_tree(root: Path, train: int = 6, test: int = 4, per_class: int = 2) -> Path:
    header = "image_id class_id super_class_id path"
    index = 0
    for part, first, count in (("train", 1, train), ("test", train + 1, test)):
        lines = [header]
        for cls in range(first, first + count):
            for k in range(per_class):
                index += 1
                rel = f"bicycle_final/{cls}_{k}.JPG"
                image(root / rel, index)
                lines.append(f"{index} {cls} 1 {rel}")
        (root / f"Ebay_{part}.txt").write_text("\n".join(lines) + "\n")
    return root


def inshop_tree(root: Path, train_items: int = 3) -> Path:
    """``train_items`` train items × 2 images, 2 test items with 1 query and 2 gallery
    images each."""
    rows = []
    for item in range(1, train_items + 1):
        rows += [(item, "train")] * 2
    for item in (train_items + 1, train_items + 2):
        rows += [(item, "query"), (item, "gallery"), (item, "gallery")]
    lines = [str(len(rows)), "image_name item_id evaluation_status"]
    for index, (item, part) in enumerate(rows):
        rel = f"img/WOMEN/Dresses/id_{item:08d}/{index:02d}_1_front.jpg"
        image(root / rel, index)
        lines.append(f"{rel} id_{item:08d} {part}")
    (root / "Eval").mkdir(parents=True, exist_ok=True)
    (root / "Eval" / "list_eval_partition.txt").write_text("\n".join(lines) + "\n")
    return root
