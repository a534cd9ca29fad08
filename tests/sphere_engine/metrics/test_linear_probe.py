"""linear_probe_accuracy: a deterministic logistic-regression probe on frozen embeddings."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics import linear_probe_accuracy


def test_separable_classes_are_probed_perfectly_and_noise_is_chance(make_clustered):
    x, y = make_clustered(5, 60, 16, spread=0.1, seed=0)
    train = np.arange(y.size) % 2 == 0
    result = linear_probe_accuracy(x[train], y[train], x[~train], y[~train])
    assert result == {"linear_probe/accuracy": 1.0, "linear_probe/train_accuracy": 1.0}
    rng = np.random.default_rng(1)
    noise = rng.normal(size=(2000, 8))
    labels = rng.integers(0, 4, size=2000)
    chance = linear_probe_accuracy(noise[:1000], labels[:1000], noise[1000:], labels[1000:])
    assert abs(chance["linear_probe/accuracy"] - 0.25) < 0.06


def test_deterministic_and_train_accuracy_reported(make_clustered):
    x, y = make_clustered(6, 40, 10, spread=0.3, seed=2)
    train = np.arange(y.size) % 4 != 0
    first = linear_probe_accuracy(x[train], y[train], x[~train], y[~train])
    again = linear_probe_accuracy(x[train], y[train], x[~train], y[~train])
    assert first == again
    assert 0.7 < first["linear_probe/accuracy"] <= first["linear_probe/train_accuracy"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"c": 0}, "c must be"),
        ({"max_iter": 0}, "max_iter"),
        ({"test_embeddings": np.ones((2, 5))}, "dimension 5"),
        ({"test_labels": np.array([0])}, "test_labels has 1"),
    ],
)
def test_bad_input(options, message):
    x = np.random.default_rng(0).normal(size=(6, 3))
    arguments = {"test_embeddings": x[:2], "test_labels": np.array([0, 1])} | options
    with pytest.raises(ValueError, match=message):
        linear_probe_accuracy(
            x,
            np.array([0, 0, 1, 1, 2, 2]),
            arguments.pop("test_embeddings"),
            arguments.pop("test_labels"),
            **arguments,
        )
