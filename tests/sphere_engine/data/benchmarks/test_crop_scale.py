"""``data.crop_scale`` reaches the benchmarks' training crop: the built transform's
RandomResizedCrop carries it and the crops it cuts cover that share of the image; a
dataset without such a crop refuses a non-default range; the default changes nothing."""

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
    assert _crop(splits).scale == (0.16, 1.0)
    areas = _crop_areas(splits.train.transform, 300)
    # resampling may shave a pixel off each side of the crop: 2 % slack
    assert areas.min() >= 0.16 - 0.02
    default = create_dataset("cub200", root=cub, **resolved_data_options(_config(cub)))
    assert _crop(default).scale == (0.08, 1.0)
    assert (_crop_areas(default.train.transform, 300) < 0.14).any()


def test_the_default_adds_no_dataset_option(cub) -> None:
    # a run stored before the field builds its dataset with the same options as before
    assert "crop_scale" not in resolved_data_options(_config(cub))


def test_a_range_on_a_dataset_without_that_crop_is_refused(cub) -> None:
    config = RunConfig.from_dict(
        {"data": {"name": "digits", "crop_scale": [0.16, 1.0]}, "model": {"name": "mlp"}}
    )
    with pytest.raises(ConfigError, match=r"^data\.crop_scale: dataset 'digits' takes no random"):
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
