import numpy as np
import pytest
import torch

from sphere_engine.data import TensorData, VectorAugment, create_dataset


def test_class_disjoint_uses_all_samples_of_each_half():
    splits = create_dataset("digits")
    assert isinstance(splits.train, TensorData)
    assert splits.input_shape == (64,)
    assert (splits.num_classes_train, splits.num_classes_test) == (5, 5)
    assert splits.train.classes.tolist() == [0, 1, 2, 3, 4]
    assert splits.test.classes.tolist() == [5, 6, 7, 8, 9]
    assert len(splits.train) + len(splits.test) == 1797
    # Labels are remapped within each split.
    assert set(splits.train.labels.tolist()) == set(range(5))
    assert set(splits.test.labels.tolist()) == set(range(5))
    assert splits.test.labels.dtype == np.int64


def test_standard_split_is_stratified_70_30_with_equal_classes():
    splits = create_dataset("digits", split="standard")
    assert splits.train.classes.tolist() == splits.test.classes.tolist() == list(range(10))
    assert len(splits.train) + len(splits.test) == 1797
    counts = np.bincount(splits.test.labels)
    totals = counts + np.bincount(splits.train.labels)
    np.testing.assert_array_equal(counts, np.round(totals * 0.3).astype(int))


def test_standard_split_depends_on_seed_only():
    a = create_dataset("digits", split="standard", seed=1)
    b = create_dataset("digits", split="standard", seed=1)
    c = create_dataset("digits", split="standard", seed=2)
    assert torch.equal(a.test.x, b.test.x)
    assert not torch.equal(a.test.x, c.test.x)


def test_values_are_scaled_to_unit_interval():
    splits = create_dataset("digits")
    x, y = splits.train.get_batch(torch.arange(len(splits.train)))
    assert x.shape == (len(splits.train), 64)
    assert x.dtype == torch.float32
    assert x.min().item() == 0.0
    assert x.max().item() == 1.0
    assert y.tolist() == splits.train.labels.tolist()


def test_standardize_uses_training_statistics():
    splits = create_dataset("digits", standardize=True)
    x = splits.train.x
    varying = x.std(0) > 0
    torch.testing.assert_close(x.mean(0), torch.zeros(64), atol=1e-5, rtol=0)
    torch.testing.assert_close(x.std(0)[varying], torch.ones(int(varying.sum())))
    assert splits.test.x.mean(0).abs().max() > 0.1  # other classes: not centred


def test_as_image_gives_one_channel_8x8_and_image_augment():
    splits = create_dataset("digits", as_image=True)
    assert splits.input_shape == (1, 8, 8)
    x, _ = splits.train.get_batch(torch.arange(6))
    assert x.shape == (6, 1, 8, 8)
    assert splits.augment.flip is False  # mirrored digits are not the same class
    assert splits.augment(x).shape == (6, 1, 8, 8)


def test_vector_augment_for_vectors():
    splits = create_dataset("digits")
    assert isinstance(splits.augment, VectorAugment)


@pytest.mark.parametrize("split", ["class_disjoint", "standard"])
def test_getitem_matches_get_batch(split):
    splits = create_dataset("digits", split=split)
    x, y = splits.test[7]
    bx, by = splits.test.get_batch(torch.tensor([7]))
    assert torch.equal(x, bx[0])
    assert y.item() == by.item() == splits.test.labels[7]
