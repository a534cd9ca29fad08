import pytest
import torch

from sphere_engine.data import VectorAugment


def test_dropout_zeroes_the_given_fraction():
    out = VectorAugment(noise_std=0.0, drop_prob=0.25)(torch.ones(100, 100))
    assert set(out.unique().tolist()) == {0.0, 1.0}
    assert abs((out == 0).float().mean().item() - 0.25) < 0.03


def test_noise_only():
    x = torch.ones(200, 50)
    out = VectorAugment(noise_std=0.2, drop_prob=0.0)(x)
    assert abs((out - x).std().item() - 0.2) < 0.01


def test_two_calls_give_two_different_views():
    augment, x = VectorAugment(), torch.randn(8, 16)
    assert not torch.equal(augment(x), augment(x))


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"noise_std": -1.0}, "noise_std"), ({"drop_prob": 1.0}, "drop_prob")]
)
def test_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VectorAugment(**kwargs)


def test_rejects_images():
    with pytest.raises(ValueError, match=r"expected vectors \(N, D\)"):
        VectorAugment()(torch.zeros(2, 1, 8, 8))
