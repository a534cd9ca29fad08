"""``data.crop_scale``: the training crop's area range is checked once, in the config,
with one line naming the field; its default is torchvision's, the crop every run used
before the field existed."""

from __future__ import annotations

import pytest

from sphere_engine.config import ConfigError, RunConfig


def test_the_default_is_torchvisions_range() -> None:
    assert RunConfig().data.crop_scale == [0.08, 1.0]
    assert RunConfig.from_dict({"data": {}}).data.crop_scale == [0.08, 1.0]


@pytest.mark.parametrize("value", [[0.16, 1.0], [0.16, 1], [1, 1], [0.5, 0.5]])
def test_ranges_inside_zero_one_are_kept_as_floats(value) -> None:
    kept = RunConfig.from_dict({"data": {"crop_scale": value}}).data.crop_scale
    assert kept == [float(v) for v in value]
    assert all(isinstance(v, float) for v in kept)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ([0.5, 0.2], "[0.5, 0.2]"),  # low above high
        ([0, 1], "[0.0, 1.0]"),  # an empty crop
        ([-0.1, 0.5], "[-0.1, 0.5]"),
        ([0.2, 1.5], "[0.2, 1.5]"),  # more than the image
        ([0.2], "[0.2]"),
        ([0.1, 0.2, 0.3], "[0.1, 0.2, 0.3]"),
    ],
)
def test_a_bad_range_is_one_line_naming_the_field(value, shown) -> None:
    with pytest.raises(ConfigError) as raised:
        RunConfig.from_dict({"data": {"crop_scale": value}})
    error = raised.value
    assert error.path == "data.crop_scale"
    assert "\n" not in str(error)
    assert str(error).startswith(f"data.crop_scale: {shown} is out of range; must be [low, high]")
    assert "0 < low <= high <= 1" in str(error)


@pytest.mark.parametrize("value", ["0.16, 1", 0.16, [True, 1.0], ["a", 1.0]])
def test_a_value_that_is_not_a_list_of_numbers_names_the_field(value) -> None:
    with pytest.raises(ConfigError, match=r"^data\.crop_scale"):
        RunConfig.from_dict({"data": {"crop_scale": value}})


def test_an_override_sets_it_from_the_command_line(tmp_path) -> None:
    path = tmp_path / "run.toml"
    path.write_text("[data]\nname = 'digits'\n")
    config = RunConfig.from_toml(path, ["data.crop_scale=[0.16, 1.0]"])
    assert config.data.crop_scale == [0.16, 1.0]
    with pytest.raises(ConfigError, match=r"^data\.crop_scale: \[0\.9, 0\.1\] is out of range"):
        RunConfig.from_toml(path, ["data.crop_scale=[0.9, 0.1]"])
