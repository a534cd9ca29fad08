import pytest

from sphere_engine.data import DATASETS, DatasetInfo, create_dataset, dataset_info

TORCHVISION = {
    "mnist": (10, (1, 28, 28)),
    "fashion_mnist": (10, (1, 28, 28)),
    "emnist": (47, (1, 28, 28)),
    "cifar10": (10, (3, 32, 32)),
    "cifar100": (100, (3, 32, 32)),
}


def test_list_datasets_names_every_dataset():
    benchmarks = ["cub200", "cars196", "sop", "inshop"]
    assert DATASETS.names() == sorted(
        ["digits", "synthetic", "image_folder", *TORCHVISION, *benchmarks]
    )


def test_unknown_dataset_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown dataset 'imagenet'; known: cars196, cifar10"):
        create_dataset("imagenet")


def test_unknown_option_names_field_and_allowed():
    with pytest.raises(ValueError, match=r"data.options.colour: .*allowed: dim, noise"):
        create_dataset("synthetic", colour=True)
    with pytest.raises(ValueError, match=r"data.options.colour"):
        dataset_info("synthetic", colour=True)


@pytest.mark.parametrize("function", [create_dataset, dataset_info])
def test_unknown_split_lists_allowed(function):
    with pytest.raises(ValueError, match=r"split: 'random' is not allowed.*class_disjoint"):
        function("digits", split="random")


def test_params_carry_help_text():
    params = DATASETS.params("synthetic")
    assert list(params) == ["num_classes", "dim", "samples_per_class", "noise"]
    assert params["noise"].default == 0.5
    assert params["noise"].annotation is float
    assert "unit-norm" in params["noise"].help
    assert set(DATASETS.params("digits")) == {"as_image", "standardize"}
    assert set(DATASETS.params("image_folder")) == {"image_size"}
    assert DATASETS.params("mnist") == {}


@pytest.mark.parametrize("name", ["digits", "synthetic"])
@pytest.mark.parametrize("split", ["class_disjoint", "standard"])
def test_info_matches_the_built_dataset(name, split):
    splits = create_dataset(name, split=split)
    assert dataset_info(name, split=split) == splits.info()


@pytest.mark.parametrize("name", list(TORCHVISION))
def test_torchvision_info_is_known_without_files(name, tmp_path):
    num_classes, shape = TORCHVISION[name]
    half = num_classes // 2
    assert dataset_info(name, root=str(tmp_path)) == DatasetInfo(half, num_classes - half, shape)
    assert dataset_info(name, split="standard") == DatasetInfo(num_classes, num_classes, shape)
