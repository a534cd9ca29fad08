"""What a pair loss's mining did on its last batch (the ``mining/`` diagnostics).

A loss keeps references to the tensors it already built (no extra work on steps that
are not logged); ``statistics()`` reduces them only when the loop logs the step:
``mining/active_fraction`` (pairs or triplets with a non-zero loss, or kept by the
miner, over the candidates) and ``mining/hardest_neg_sim`` (mean over anchors of their
most similar negative's cosine: how close the hardest confusions are).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class MiningRecord:
    active: torch.Tensor  # boolean, any shape: the candidates the loss learnt from
    candidates: torch.Tensor  # boolean, the same shape: every valid pair / triplet
    similarity: torch.Tensor  # N × N cosine similarities (detached)
    negative: torch.Tensor  # N × N boolean mask of negative pairs

    def statistics(self) -> dict[str, torch.Tensor]:
        with torch.no_grad():
            active = (self.active & self.candidates).sum().float()
            fraction = active / self.candidates.sum().clamp(min=1).float()
            has_negative = self.negative.any(dim=1)
            hardest = self.similarity.masked_fill(~self.negative, float("-inf")).amax(dim=1)
            hardest_mean = torch.where(has_negative, hardest, torch.zeros_like(hardest)).sum() / (
                has_negative.sum().clamp(min=1)
            )
        return {"mining/active_fraction": fraction, "mining/hardest_neg_sim": hardest_mean}
