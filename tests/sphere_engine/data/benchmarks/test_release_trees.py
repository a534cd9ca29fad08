"""The benchmarks read from their archives as they unpack, and a listed image the tree
lacks is refused at launch (``dataset_info``) with the first missing paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from benchmark_trees import cars_tree, cub_tree, inshop_tree, sop_tree

from sphere_engine.config import ConfigError
from sphere_engine.data import create_dataset, dataset_info


def inshop_release(root: Path) -> Path:
    """In-Shop as its archive unpacks: ``Eval/`` beside ``Img/img/``."""
    inshop_tree(root)
    (root / "Img").mkdir()
    shutil.move(root / "img", root / "Img" / "img")
    return root


TREES = {
    # name: (make the release tree under a folder, the root a user gives, a listed image)
    "cub200": (
        lambda top: cub_tree(top / "CUB_200_2011", classes=200, per_class=1),
        lambda top: top,
        "CUB_200_2011/images/150.Bird_150/img_0.jpg",
    ),
    "cars196": (
        lambda top: cars_tree(top, classes=196),
        lambda top: top,
        "car_ims/000150.jpg",
    ),
    "sop": (
        lambda top: sop_tree(top / "Stanford_Online_Products"),
        lambda top: top,
        "Stanford_Online_Products/bicycle_final/8_1.JPG",
    ),
    "inshop": (
        inshop_release,
        lambda top: top,
        "Img/img/WOMEN/Dresses/id_00000004/07_1_front.jpg",
    ),
}


@pytest.mark.parametrize("name", list(TREES))
def test_release_tree_reads_and_a_missing_image_is_named_at_launch(name, tmp_path):
    make, root_of, listed = TREES[name]
    make(tmp_path)
    root = str(root_of(tmp_path))
    info = dataset_info(name, root=root, download=False, image_size=16)
    assert info.num_classes_train >= 2 and info.num_classes_test >= 2
    splits = create_dataset(name, root=root, image_size=16)
    assert tuple(splits.test[0][0].shape) == (3, 16, 16)  # an image decoded from the tree

    (tmp_path / listed).unlink()
    with pytest.raises(ConfigError) as raised:
        dataset_info(name, root=root, download=False, image_size=16)
    assert raised.value.path == "data.root"
    assert f"1 of the {len(_listed(splits))} images listed in" in str(raised.value)
    assert listed.split("/", 1)[-1] in str(raised.value) and "\n" not in str(raised.value)


def _listed(splits) -> list:
    return [*splits.train.paths, *splits.test.paths]


def test_inshop_reads_img_at_the_root_too(tmp_path):
    inshop_tree(tmp_path)
    info = dataset_info("inshop", root=str(tmp_path), download=False, image_size=16)
    assert info.num_classes_test == 2


def test_many_missing_images_are_counted_and_the_first_three_named(tmp_path):
    inshop_release(tmp_path)
    shutil.rmtree(tmp_path / "Img" / "img" / "WOMEN" / "Dresses" / "id_00000001")
    shutil.rmtree(tmp_path / "Img" / "img" / "WOMEN" / "Dresses" / "id_00000002")
    with pytest.raises(ConfigError, match=r"^data\.root: 4 of the 12 images listed in "
                       r"list_eval_partition\.txt are missing .*: Img/img/WOMEN/Dresses/"
                       r"id_00000001/00_1_front\.jpg, .* \(and 1 more\)"):  # fmt: skip
        dataset_info("inshop", root=str(tmp_path), download=False, image_size=16)
