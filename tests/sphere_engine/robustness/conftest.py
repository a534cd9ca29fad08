"""A small classifier trained on scikit-learn's digits (8 × 8 images in [0, 1]), cheap."""

from __future__ import annotations

import pytest
import torch
from sklearn.datasets import load_digits
from torch import nn


@pytest.fixture(scope="session")
def digits_model():
    """(model: inputs → 16-d embeddings, head: embeddings → 10 logits, test x, test y)."""
    digits = load_digits()
    x = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y = torch.tensor(digits.target)
    generator = torch.Generator().manual_seed(0)
    order = torch.randperm(len(y), generator=generator)
    train, test = order[:1400], order[1400:]
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: extra threads only add contention
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 16))
    head = nn.Linear(16, 10)
    optimiser = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=1e-2)
    for _ in range(300):
        batch = train[torch.randint(0, len(train), (128,), generator=generator)]
        loss = nn.functional.cross_entropy(head(model(x[batch])), y[batch])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    optimiser.zero_grad()  # no gradients left on the parameters: the attacks must add none
    torch.set_num_threads(threads)
    return model, head, x[test], y[test]


@pytest.fixture(autouse=True)
def _one_thread():
    """The attacks on 400 digits are tiny products; one thread avoids contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
