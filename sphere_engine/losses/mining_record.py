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
from sphere_engine.diagnostics.similarity_histogram import (
    NEGATIVE_NAMES,
    POSITIVE_NAMES,
    finish_histograms,
)
from sphere_engine.diagnostics.step_transfer import PackedStatistics


@dataclass(frozen=True)
class MiningRecord:
    active: torch.Tensor  # boolean, any shape: the candidates the loss learnt from
    candidates: torch.Tensor  # boolean, the same shape: every valid pair / triplet
    similarity: torch.Tensor  # N × N cosine similarities (detached)
    negative: torch.Tensor  # N × N boolean mask of negative pairs

    def tensors(self) -> tuple[torch.Tensor, ...]:
        """The record's tensors, in field order (``MiningRecord(*tensors)`` is a copy)."""
        return (self.active, self.candidates, self.similarity, self.negative)

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
            count_bins = histc_of_masked if sim.device.type == "cpu" else masked_bin_counts
            counts = [count_bins(sim, mask) for mask in (positive, self.negative)]
        return PackedStatistics(
            POSITIVE_NAMES + NEGATIVE_NAMES, tuple(counts), finish_histograms, ("sim_hist",)
        )


def histc_of_masked(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``torch.histc`` of ``values[mask]`` over the catalogue's bins (a CPU has no sync
    to avoid)."""
    return torch.histc(values[mask], bins=hist.BINS, min=hist.LOW, max=hist.HIGH)


def masked_bin_counts(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The counts ``histc_of_masked`` gives, for ``values`` in [LOW, HIGH], without
    selecting ``values[mask]``: a boolean selection's size is read on the host, a sync
    per step on an accelerator. Each value's bin is histc's rule, (v − LOW) · BINS /
    (HIGH − LOW) truncated, HIGH in the last bin; the mask (NaN left out, as histc
    does) is the weight."""
    position = (values - hist.LOW) * hist.BINS / (hist.HIGH - hist.LOW)
    bins = position.nan_to_num(0.0).long().clamp_(0, hist.BINS - 1).reshape(-1)
    weights = (mask & ~values.isnan()).reshape(-1).to(values.dtype)
    counts = torch.zeros(hist.BINS, dtype=values.dtype, device=values.device)
    return counts.index_add_(0, bins, weights)
