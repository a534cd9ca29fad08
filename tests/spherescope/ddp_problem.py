"""The data of the distributed SDK tests, the same in every rank and in the test itself.

Rank r's training batches have embeddings of norm exactly 1 + 2r, so the global batch
of two ranks has norm mean 2 and variance 1 while each rank alone has variance 0.
"""

from __future__ import annotations

import torch
from torch.utils.data import DistributedSampler

WORLD = 2
BATCH = 6  # per rank
WIDTH = 4
STEPS = 3
EVAL_SIZE = 21  # odd: DistributedSampler pads rank 1's shard with sample 0


def rank_batch(rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rank ``rank``'s embeddings (a leaf that requires a gradient) and labels."""
    generator = torch.Generator().manual_seed(1000 * step + rank)
    directions = torch.nn.functional.normalize(torch.randn(BATCH, WIDTH, generator=generator))
    embeddings = (directions * (1 + 2 * rank)).requires_grad_(True)
    labels = torch.arange(BATCH) % 3
    return embeddings, labels


def global_batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """All ranks' batches of ``step`` as one, in rank order."""
    parts = [rank_batch(rank, step) for rank in range(WORLD)]
    embeddings = torch.cat([e.detach() for e, _ in parts]).requires_grad_(True)
    return embeddings, torch.cat([labels for _, labels in parts])


def loss_of(embeddings: torch.Tensor) -> torch.Tensor:
    """A per-sample loss averaged over the batch (DDP averages the ranks' gradients)."""
    target = torch.nn.functional.normalize(torch.ones(WIDTH), dim=0)
    return (-(embeddings @ target) + 0.1 * embeddings.pow(2).sum(dim=1)).mean()


def evaluation_set() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """EVAL_SIZE embeddings, labels and sample ids."""
    generator = torch.Generator().manual_seed(7)
    labels = torch.arange(EVAL_SIZE) % 3
    centres = torch.randn(3, WIDTH, generator=generator)
    embeddings = centres[labels] + 0.8 * torch.randn(EVAL_SIZE, WIDTH, generator=generator)
    return embeddings, labels, torch.arange(EVAL_SIZE)


def evaluation_shard(rank: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rank ``rank``'s shard as DistributedSampler deals it (padding included)."""
    embeddings, labels, ids = evaluation_set()
    sampler = DistributedSampler(range(EVAL_SIZE), num_replicas=WORLD, rank=rank, shuffle=False)
    index = torch.tensor(list(sampler))
    return embeddings[index], labels[index], ids[index]
