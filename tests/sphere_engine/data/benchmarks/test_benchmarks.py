"""The benchmark readers on tiny trees in each official layout: split sizes, names,
In-Shop's query/gallery flags, and launch errors for wrong or incomplete roots."""

import numpy as np
import pytest
from benchmark_trees import cars_tree, cub_tree, inshop_tree, sop_tree

from sphere_engine.config import RunConfig
from sphere_engine.data import create_dataset, dataset_info
from sphere_engine.validation import validate


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("benchmarks")
    return {
        "cub200": cub_tree(base / "CUB_200_2011"),
        "cars196": cars_tree(base / "cars"),
        "sop": sop_tree(base / "Stanford_Online_Products"),
        "inshop": inshop_tree(base / "inshop"),
    }


@pytest.mark.parametrize(
    ("name", "train_classes", "test_classes", "train_images", "test_images"),
    [
        ("cub200", 100, 100, 200, 200),
        ("cars196", 98, 98, 98, 98),
        ("sop", 6, 4, 12, 8),
        ("inshop", 3, 2, 6, 6),
    ],
)
def test_official_splits(trees, name, train_classes, test_classes, train_images, test_images):
    root = str(trees[name])
    info = dataset_info(name, root=root, download=False, image_size=16)
    assert (info.num_classes_train, info.num_classes_test) == (train_classes, test_classes)
    assert info.input_shape == (3, 16, 16)
    splits = create_dataset(name, root=root, image_size=16)
    assert (len(splits.train), len(splits.test)) == (train_images, test_images)
    assert splits.num_classes_train == train_classes
    x, y = splits.test[0]
    assert x.shape == (3, 16, 16) and int(y) == 0
    assert splits.train[0][0].shape == (3, 16, 16)  # random-resized crop to the size


def test_class_ranges_and_names(trees):
    cub = create_dataset("cub200", root=str(trees["cub200"]), image_size=16)
    assert cub.train.classes.tolist() == list(range(1, 101))
    assert cub.test.classes.tolist() == list(range(101, 201))
    assert cub.test.class_names[0] == "Bird 101"
    cars = create_dataset("cars196", root=str(trees["cars196"]), image_size=16)
    assert cars.test.classes[0] == 99 and cars.test.class_names[0] == "Maker Model 99 2012"
    sop = create_dataset("sop", root=str(trees["sop"]), image_size=16)
    assert sop.train.class_names[0] == "bicycle/1"


def test_inshop_queries_are_the_official_ones(trees):
    splits = create_dataset("inshop", root=str(trees["inshop"]), image_size=16)
    assert splits.test.is_query.tolist() == [True, False, False] * 2
    assert np.asarray(splits.test.labels).tolist() == [0, 0, 0, 1, 1, 1]


def test_incomplete_and_foreign_roots_fail_naming_what_is_missing(trees, tmp_path):
    (trees["cub200"] / "image_class_labels.txt").rename(tmp_path / "moved.txt")
    try:
        with pytest.raises(
            ValueError, match=r"^data.root: image_class_labels.txt is missing under '.*'"
        ):
            dataset_info("cub200", root=str(trees["cub200"]), download=False)
    finally:
        (tmp_path / "moved.txt").rename(trees["cub200"] / "image_class_labels.txt")
    with pytest.raises(ValueError, match="not the sop layout; it looks like the cars196 layout"):
        dataset_info("sop", root=str(trees["cars196"]), download=False)
    with pytest.raises(ValueError, match=r"data\.root: '' is not a folder"):
        dataset_info("inshop", root="", download=False)


def test_launch_validation_resolves_image_size_from_the_backbone(trees):
    config = RunConfig.from_dict(
        {
            "data": {"name": "cub200", "root": str(trees["cub200"]), "samples_per_class": 2},
            "model": {"name": "lenetpp"},
        }
    )
    validate(config)
    from sphere_engine.validation.image_size import resolved_data_options

    assert "image_size" not in resolved_data_options(config)  # lenetpp: the dataset default
    config.model.name = "bninception"
    assert resolved_data_options(config)["image_size"] == 227
    config.data.image_size = 16
    with pytest.raises(ValueError, match=r"^data\.image_size: 16 is too small for bninception; "):
        validate(config)
    config.data.name = "digits"
    with pytest.raises(ValueError, match=r"data\.image_size: dataset 'digits' has fixed-size"):
        validate(config)


def test_other_readers_given_a_benchmark_root_say_which_layout_they_found(trees):
    with pytest.raises(
        ValueError, match=r"^data.root: '.*' is in the cub200 layout .*; set data.name = cub200$"
    ):
        dataset_info("image_folder", root=str(trees["cub200"]), download=False)
    with pytest.raises(ValueError, match=r"^data.root: CIFAR10 .*; it looks like the sop layout;"):
        dataset_info("cifar10", root=str(trees["sop"]), download=False)
