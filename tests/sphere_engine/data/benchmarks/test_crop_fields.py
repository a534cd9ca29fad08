"""``data.crop_scale`` and ``data.resize`` reach the benchmarks' crops: the built
transform's RandomResizedCrop carries the range and the crops it cuts cover that share
of the image; ``resize`` resizes before both crops (MLRC: 256 then 227); a dataset
without such crops refuses a non-default value; the defaults change nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from benchmark_trees import cub_tree
from PIL import Image

from sphere_engine.config import ConfigError, RunConfig
from sphere_engine.data import create_dataset
from sphere_engine.data.image_pipeline import v2  # torchvision's, loaded after tv_compat
from sphere_engine.validation import resolved_data_options, validate

SIDE = 200


@pytest.fixture(scope="module")
def cub(tmp_path_factory):
    return str(cub_tree(tmp_path_factory.mktemp("crop") / "CUB_200_2011"))


def _config(root: str, **data) -> RunConfig:
    return RunConfig.from_dict(
        {
            "data": {"name": "cub200", "root": root, "samples_per_class": 2, **data},
            "model": {"name": "lenetpp"},
        }
    )


def _crop(splits) -> v2.RandomResizedCrop:
    (crop,) = [t for t in splits.train.transform.transforms if isinstance(t, v2.RandomResizedCrop)]
    return crop


def _crop_areas(transform, draws: int) -> np.ndarray:
    """The share of the image each training crop covers: the red and green channels of
    the input hold its column and row, so a crop's extent is the range it keeps."""
    rows, cols = np.mgrid[0:SIDE, 0:SIDE]
    pixels = np.stack([cols, rows, np.zeros_like(rows)], axis=-1).astype(np.uint8)
    image = Image.fromarray(pixels)
    torch.manual_seed(0)
    areas = []
    for _ in range(draws):
        out = transform(image).numpy().astype(float)
        width = out[0].max() - out[0].min() + 1
        height = out[1].max() - out[1].min() + 1
        areas.append(width * height / SIDE**2)
    return np.array(areas)


def test_the_training_crop_covers_the_configured_share_of_the_image(cub) -> None:
    config = _config(cub, crop_scale=[0.16, 1.0])
    validate(config)
    splits = create_dataset("cub200", root=cub, **resolved_data_options(config))
    assert _crop(splits).scale == (0.16, 1.0) and splits.input_shape == (3, 224, 224)
    areas = _crop_areas(splits.train.transform, 200)
    # 224-px crops (lenetpp: the dataset default) measure the extent to a pixel: 2 % slack
    assert areas.min() >= 0.16 - 0.02
    default = create_dataset("cub200", root=cub, **resolved_data_options(_config(cub)))
    assert _crop(default).scale == (0.08, 1.0)
    assert (_crop_areas(default.train.transform, 200) < 0.14).any()


def test_the_defaults_add_no_dataset_option(cub) -> None:
    # a run stored before the fields builds its dataset with the same options as before
    options = resolved_data_options(_config(cub))
    assert "crop_scale" not in options and "resize" not in options
    splits = create_dataset("cub200", root=cub, **options)
    test_steps = [type(t).__name__ for t in splits.test.transform.transforms]
    assert test_steps == ["ToImage", "Resize", "CenterCrop"]
    assert splits.test.transform.transforms[1].size == [256]  # round(224 · 256/224)
    train_steps = [type(t).__name__ for t in splits.train.transform.transforms]
    assert train_steps == ["ToImage", "RandomResizedCrop", "RandomHorizontalFlip"]


def test_mlrcs_crops_resize_to_256_then_cut_227(cub) -> None:
    config = _config(cub, crop_scale=[0.16, 1.0], resize=256, image_size=227)
    splits = create_dataset("cub200", root=cub, **resolved_data_options(config))
    train, test = splits.train.transform.transforms, splits.test.transform.transforms
    assert [type(t).__name__ for t in train] == [
        "ToImage", "Resize", "RandomResizedCrop", "RandomHorizontalFlip",
    ]  # fmt: skip
    assert train[1].size == [256] and train[2].size == (227, 227) and train[2].scale == (0.16, 1)
    assert [type(t).__name__ for t in test] == ["ToImage", "Resize", "CenterCrop"]
    assert test[1].size == [256] and test[2].size == (227, 227)
    assert splits.test[0][0].shape == (3, 227, 227)


def test_a_resize_below_the_crop_is_refused_naming_the_field(cub) -> None:
    with pytest.raises(ConfigError) as raised:
        validate(_config(cub, resize=200))  # the crop is 224 px
    assert raised.value.paths == ("data.resize", "data.image_size")
    assert str(raised.value) == (
        "data.resize: 200 is below the 224-px crop; resize to at least the crop's side"
    )
    with pytest.raises(ValueError, match=r"^data\.resize: -1 is below the minimum 0"):
        RunConfig.from_dict({"data": {"resize": -1}})


@pytest.mark.parametrize(("field", "value"), [("crop_scale", [0.16, 1.0]), ("resize", 256)])
def test_a_crop_setting_on_a_dataset_without_those_crops_is_refused(field, value) -> None:
    config = RunConfig.from_dict(
        {"data": {"name": "digits", field: value}, "model": {"name": "mlp"}}
    )
    with pytest.raises(ConfigError, match=rf"^data\.{field}: dataset 'digits' does not resize"):
        validate(config)


def test_the_dataset_option_says_the_same_under_data_options(cub) -> None:
    config = _config(cub)
    config.data.options = {"crop_scale": [0.6, 0.3]}
    with pytest.raises(ConfigError) as raised:
        validate(config)
    assert raised.value.path == "data.options.crop_scale"
    assert str(raised.value).startswith("data.options.crop_scale: [0.6, 0.3] is out of range")
    config = _config(cub, crop_scale=[0.16, 1.0])
    config.data.options = {"crop_scale": [0.3, 1.0]}
    with pytest.raises(ConfigError, match=r"^data\.crop_scale: \[0\.16, 1\.0\] contradicts"):
        validate(config)
    config = _config(cub)
    config.data.options = {"resize": 100}
    with pytest.raises(ConfigError) as raised:
        validate(config)
    assert str(raised.value) == (
        "data.options.resize: 100 is out of range; must be 0 or at least image_size (224)"
    )
