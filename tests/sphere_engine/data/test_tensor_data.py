import numpy as np
import pytest
import torch

from sphere_engine.data import TensorData


def test_labels_are_remapped_and_classes_kept():
    data = TensorData(torch.zeros(4, 2), [7, 3, 7, 9])
    assert data.labels.tolist() == [1, 0, 1, 2]
    assert data.labels.dtype == np.int64
    assert data.classes.tolist() == [3, 7, 9]
    assert data.num_classes == 3


def test_uint8_images_are_scaled_and_normalised_per_channel():
    x = torch.full((3, 2, 4, 4), 255, dtype=torch.uint8)
    x[:, 1] = 0
    data = TensorData(x, [0, 1, 2], mean=(0.5, 0.25), std=(0.5, 0.25))
    batch, y = data.get_batch(torch.tensor([2, 0]))
    assert batch.dtype == torch.float32
    assert y.tolist() == [2, 0]
    assert torch.equal(batch[:, 0], torch.ones(2, 4, 4))
    assert torch.equal(batch[:, 1], -torch.ones(2, 4, 4))


def test_to_moves_data_and_keeps_values():
    data = TensorData(torch.randn(5, 3), [0, 1, 0, 1, 2])
    moved = data.to("cpu")
    assert moved is not data
    x, y = moved.get_batch(torch.tensor([4]))
    assert torch.equal(x[0], data.x[4])
    assert y.item() == 2


def test_bad_inputs():
    with pytest.raises(ValueError, match="x has 2 samples but labels has 3"):
        TensorData(torch.zeros(2, 3), [0, 1, 2])
    with pytest.raises(ValueError, match=r"dtype torch.float64 is not allowed"):
        TensorData(torch.zeros(2, 3, dtype=torch.float64), [0, 1])
