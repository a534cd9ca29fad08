import numpy as np
import pytest
import torch
from PIL import Image

from sphere_engine.data import DatasetInfo, ImageFolderData, create_dataset, dataset_info
from sphere_engine.data.image_folder_data import IMAGENET_MEAN, IMAGENET_STD

COLOURS = {
    "a_red": (255, 0, 0),
    "b_green": (0, 255, 0),
    "c_blue": (0, 0, 255),
    "d_black": (0, 0, 0),
}


def _tree(folder, per_class=3):
    for name, colour in COLOURS.items():
        (folder / name).mkdir(parents=True)
        for i in range(per_class):
            Image.new("RGB", (12, 10), colour).save(folder / name / f"{i}.png")
    (folder / "a_red" / "notes.txt").write_text("not an image")


def test_flat_tree_class_disjoint(tmp_path):
    _tree(tmp_path)
    assert dataset_info("image_folder", root=str(tmp_path)) == DatasetInfo(2, 2, (3, 64, 64))
    splits = create_dataset("image_folder", root=str(tmp_path), image_size=8)
    assert isinstance(splits.train, ImageFolderData)
    assert not hasattr(splits.train, "get_batch")
    assert splits.input_shape == (3, 8, 8)
    assert (len(splits.train), len(splits.test)) == (6, 6)  # the .txt file is skipped
    assert splits.train.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert splits.test.labels.tolist() == [0, 0, 0, 1, 1, 1]  # blue, black remapped
    x, y = splits.train[0]
    assert x.shape == (3, 8, 8)
    assert y.item() == 0
    red = torch.tensor(
        [
            (1 - IMAGENET_MEAN[0]) / IMAGENET_STD[0],
            *(-m / s for m, s in zip(IMAGENET_MEAN[1:], IMAGENET_STD[1:], strict=True)),
        ]
    )
    torch.testing.assert_close(x[:, 4, 4], red, atol=1e-5, rtol=0)
    black, _ = splits.test[3]
    expected = torch.tensor([-m / s for m, s in zip(IMAGENET_MEAN, IMAGENET_STD, strict=True)])
    torch.testing.assert_close(black[:, 0, 0], expected, atol=1e-5, rtol=0)


def test_flat_tree_standard_is_stratified(tmp_path):
    _tree(tmp_path, per_class=10)
    splits = create_dataset("image_folder", root=str(tmp_path), split="standard", image_size=8)
    assert np.bincount(splits.train.labels).tolist() == [7] * 4
    assert np.bincount(splits.test.labels).tolist() == [3] * 4


def test_train_test_layout(tmp_path):
    _tree(tmp_path / "train", per_class=2)
    _tree(tmp_path / "test", per_class=1)
    root = str(tmp_path)
    assert dataset_info("image_folder", root=root, split="standard") == DatasetInfo(
        4, 4, (3, 64, 64)
    )
    standard = create_dataset("image_folder", root=root, split="standard", image_size=8)
    assert (len(standard.train), len(standard.test)) == (8, 4)
    assert all("train" in str(p) for p in standard.train.paths)
    disjoint = create_dataset("image_folder", root=root, image_size=8)
    assert (len(disjoint.train), len(disjoint.test)) == (6, 6)
    assert {p.parent.name for p in disjoint.test.paths} == {"c_blue", "d_black"}


def test_missing_root_and_empty_root(tmp_path):
    with pytest.raises(ValueError, match="is not a folder; image_folder needs"):
        dataset_info("image_folder", root=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="no class sub-folders"):
        create_dataset("image_folder", root=str(tmp_path))


def test_image_size_must_be_reasonable():
    with pytest.raises(ValueError, match=r"data.options.image_size: 4"):
        dataset_info("image_folder", root=".", image_size=4)
