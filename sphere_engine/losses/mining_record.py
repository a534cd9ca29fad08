"""What a pair loss's mining did on its last batch (the ``mining/`` diagnostics).

A loss keeps references to the tensors it already built (no extra work on steps that
are not logged); ``statistics()`` reduces them only when the loop logs the step:
``mining/active_fraction`` (pairs or triplets with a non-zero loss, or kept by the
miner, over the candidates) and ``mining/hardest_neg_sim`` (mean over anchors of their
most similar negative's cosine: how close the hardest confusions are); ``histograms()``
counts the batch's positive and negative pair cosines in the fixed bins of
``catalogue.similarity_histogram`` (finished into fractions on the host).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from sphere_engine.catalogue import similarity_histogram as hist
from sphere_engine.diagnostics.packed_statistics import PackedStatistics
from sphere_engine.diagnostics.similarity_histogram import (
    NEGATIVE_NAMES,
    POSITIVE_NAMES,
    finish_histograms,
)


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

    def histograms(self) -> PackedStatistics:
        """Counts of positive pairs (same label, not the sample itself) and of negative
        pairs per cosine bin: 2 × BINS numbers, counted where the batch lives."""
        with torch.no_grad():
            count = self.similarity.shape[0]
            itself = torch.eye(count, dtype=torch.bool, device=self.similarity.device)
            positive = ~self.negative & ~itself
            # histc drops values outside [min, max]: rounding puts a cosine at 1 + 1e-7
            sim = self.similarity.float().clamp(hist.LOW, hist.HIGH)
            counts = [
                torch.histc(sim[mask], bins=hist.BINS, min=hist.LOW, max=hist.HIGH)
                for mask in (positive, self.negative)
            ]
        return PackedStatistics(
            POSITIVE_NAMES + NEGATIVE_NAMES, tuple(counts), finish_histograms, ("sim_hist",)
        )
