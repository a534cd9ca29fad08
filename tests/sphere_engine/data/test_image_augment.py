import pytest
import torch

from sphere_engine.data import ImageAugment


def test_crop_shifts_content_within_padding():
    x = torch.zeros(64, 1, 6, 6)
    x[:, :, 2, 3] = 1.0
    out = ImageAugment(padding=2, flip=False, noise_std=0.0)(
        x, generator=torch.Generator().manual_seed(0)
    )
    assert out.shape == x.shape
    # The single bright pixel moved by at most 2 in each direction (or left the frame).
    for image in out[:, 0]:
        where = (image == 1.0).nonzero()
        assert len(where) <= 1
        if len(where):
            row, col = where[0].tolist()
            assert abs(row - 2) <= 2 and abs(col - 3) <= 2
    assert (out.sum((1, 2, 3)) == 1).sum() > 32  # mostly still inside
    assert not torch.equal(out, x)  # and shifted in some


def test_zero_padding_and_no_noise_is_identity_without_flip():
    x = torch.randn(4, 3, 5, 5)
    assert torch.equal(ImageAugment(padding=0, flip=False, noise_std=0.0)(x), x)


def test_flip_mirrors_about_half_the_images():
    x = torch.arange(5.0).expand(200, 1, 5, 5)
    out = ImageAugment(padding=0, flip=True, noise_std=0.0)(
        x, generator=torch.Generator().manual_seed(1)
    )
    flipped = (out[:, 0, 0] == torch.arange(4.0, -1, -1)).all(1)
    unchanged = (out[:, 0, 0] == torch.arange(5.0)).all(1)
    assert (flipped | unchanged).all()
    assert 60 < flipped.sum() < 140


def test_noise_has_the_given_std():
    out = ImageAugment(padding=0, flip=False, noise_std=0.1)(torch.zeros(50, 3, 16, 16))
    assert abs(out.std().item() - 0.1) < 0.01


def test_rejects_vectors():
    with pytest.raises(ValueError, match=r"expected images \(N, C, H, W\)"):
        ImageAugment()(torch.zeros(4, 64))
