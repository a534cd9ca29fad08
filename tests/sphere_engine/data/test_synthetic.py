import numpy as np
import pytest
import torch

from sphere_engine.data import create_dataset


def test_shapes_and_classes_of_both_splits():
    disjoint = create_dataset("synthetic", num_classes=6, dim=5, samples_per_class=10)
    assert disjoint.input_shape == (5,)
    assert disjoint.train.x.shape == (30, 5)
    assert disjoint.test.x.shape == (30, 5)
    assert disjoint.train.classes.tolist() == [0, 1, 2]
    assert disjoint.test.classes.tolist() == [3, 4, 5]
    standard = create_dataset("synthetic", split="standard", num_classes=6, samples_per_class=10)
    assert standard.train.classes.tolist() == standard.test.classes.tolist() == list(range(6))
    assert np.bincount(standard.train.labels).tolist() == [7] * 6
    assert np.bincount(standard.test.labels).tolist() == [3] * 6


def test_deterministic_by_seed():
    a = create_dataset("synthetic", seed=3)
    b = create_dataset("synthetic", seed=3)
    c = create_dataset("synthetic", seed=4)
    assert torch.equal(a.train.x, b.train.x)
    assert torch.equal(a.test.x, b.test.x)
    assert not torch.equal(a.train.x, c.train.x)


def test_clusters_sit_around_unit_norm_means_with_the_given_noise():
    splits = create_dataset(
        "synthetic", split="standard", num_classes=4, dim=64, samples_per_class=400, noise=0.2
    )
    x, labels = splits.train.x, splits.train.labels
    means = torch.stack([x[torch.from_numpy(labels == c)].mean(0) for c in range(4)])
    torch.testing.assert_close(means.norm(dim=1), torch.ones(4), atol=0.05, rtol=0)
    spread = x - means[torch.from_numpy(labels)]
    assert abs(spread.std().item() - 0.2) < 0.01


def test_zero_noise_puts_every_sample_on_its_class_mean():
    splits = create_dataset("synthetic", noise=0.0, num_classes=4, samples_per_class=3)
    x = splits.train.x
    torch.testing.assert_close(x.norm(dim=1), torch.ones(6))
    assert torch.equal(x[0], x[1])
    assert not torch.equal(x[0], x[3])


@pytest.mark.parametrize(
    ("option", "value"),
    [("num_classes", 1), ("dim", 0), ("samples_per_class", 1), ("noise", -0.1)],
)
def test_bad_options_name_the_field(option, value):
    with pytest.raises(ValueError, match=f"data.options.{option}: {value}"):
        create_dataset("synthetic", **{option: value})
