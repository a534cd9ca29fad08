import pytest
import torch

from sphere_engine.heads import HEADS


def test_wrong_embedding_shape():
    head = HEADS.create("normface", 4, 3)
    with pytest.raises(ValueError, match=r"embeddings: expected shape \(N, 4\)"):
        head(torch.randn(2, 5))
    with pytest.raises(ValueError, match="embeddings"):
        head(torch.randn(4))


def test_wrong_labels():
    head = HEADS.create("arcface", 4, 3)
    with pytest.raises(ValueError, match=r"labels: expected shape \(2,\)"):
        head(torch.randn(2, 4), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="integer"):
        head(torch.randn(2, 4), torch.tensor([0.0, 1.0]))


def test_int32_labels_are_accepted():
    head = HEADS.create("cosface", 4, 3)
    x = torch.randn(2, 4)
    a = head(x, torch.tensor([0, 2], dtype=torch.int32))
    b = head(x, torch.tensor([0, 2]))
    torch.testing.assert_close(a, b)
    assert not torch.allclose(a, head(x))
