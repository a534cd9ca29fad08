import struct
from pathlib import Path

import numpy as np
import pytest
import torch

from sphere_engine.data import TensorData, create_dataset

EXPECTED_FILE = {
    "mnist": "MNIST/raw/train-images-idx3-ubyte",
    "fashion_mnist": "FashionMNIST/raw/t10k-labels-idx1-ubyte",
    "emnist": "EMNIST/raw/emnist-balanced-train-images-idx3-ubyte",
    "cifar10": "cifar-10-batches-py/data_batch_5",
    "cifar100": "cifar-100-python/train",
}


@pytest.mark.parametrize("name", list(EXPECTED_FILE))
def test_missing_files_name_folder_and_expected_files(name, tmp_path):
    with pytest.raises(ValueError) as caught:
        create_dataset(name, root=str(tmp_path))
    message = str(caught.value)
    assert str(tmp_path / EXPECTED_FILE[name]) in message
    assert "download" in message


def test_empty_root_is_refused_before_looking_anywhere():
    with pytest.raises(ValueError, match=r"data.root is empty.*MNIST/raw/train-images"):
        create_dataset("mnist")


def _write_idx(path: Path, array: np.ndarray) -> None:
    """IDX file: magic (0, 0, type 0x08 = uint8, number of dims), big-endian sizes, data."""
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim)
    header += struct.pack(f">{array.ndim}I", *array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def _fake_mnist(root: Path, per_class_train: int, per_class_test: int) -> None:
    """Images filled with 20 × label (plus the sample number in pixel (0, 0))."""
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for prefix, per_class in (("train", per_class_train), ("t10k", per_class_test)):
        labels = np.tile(np.arange(10), per_class)
        images = np.repeat(20 * labels, 28 * 28).reshape(-1, 28, 28)
        images[:, 0, 0] = np.arange(len(labels))
        _write_idx(raw / f"{prefix}-images-idx3-ubyte", images)
        _write_idx(raw / f"{prefix}-labels-idx1-ubyte", labels)


def test_fake_mnist_standard_split_loads_offline(tmp_path):
    _fake_mnist(tmp_path, per_class_train=2, per_class_test=1)
    splits = create_dataset("mnist", root=str(tmp_path), split="standard")
    assert isinstance(splits.train, TensorData)
    assert splits.input_shape == (1, 28, 28)
    assert (len(splits.train), len(splits.test)) == (20, 10)
    assert (splits.num_classes_train, splits.num_classes_test) == (10, 10)
    assert splits.train.x.dtype == torch.uint8  # kept compact, normalised per batch
    x, y = splits.train.get_batch(torch.tensor([3, 14]))
    assert x.shape == (2, 1, 28, 28)
    assert y.tolist() == [3, 4]
    expected = (20 * 3 / 255 - 0.1307) / 0.3081
    torch.testing.assert_close(x[0, 0, 5, 5], torch.tensor(expected))
    assert splits.augment.flip is False


def test_fake_mnist_class_disjoint_pools_train_and_test_files(tmp_path):
    _fake_mnist(tmp_path, per_class_train=2, per_class_test=1)
    splits = create_dataset("mnist", root=str(tmp_path))
    assert splits.train.classes.tolist() == [0, 1, 2, 3, 4]
    assert splits.test.classes.tolist() == [5, 6, 7, 8, 9]
    assert (len(splits.train), len(splits.test)) == (15, 15)
    x, y = splits.test.get_batch(torch.arange(15))
    # Test labels are remapped: original class 5 + y; the pixels still match them.
    pixel = (x[:, 0, 5, 5] * 0.3081 + 0.1307) * 255
    torch.testing.assert_close(pixel, 20.0 * (y + 5).float(), atol=1e-3, rtol=0)
