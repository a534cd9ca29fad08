"""``BaseLoss``: the fixed steps every loss shares (pytorch-metric-learning style).

``forward`` checks the batch, calls the subclass's ``compute_loss``, adds the weighted
embedding regulariser ("loss + SEC" is a composition, not a new loss) and records the
unweighted terms in ``last_terms`` for logging.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from sphere_engine.config.option_checks import check_option
from sphere_engine.losses.mining_record import MiningRecord
from sphere_engine.registry import ComponentTraits


class BaseLoss(nn.Module):
    """A loss on a batch of raw embeddings, optionally plus a norm regulariser.

    Subclasses implement ``compute_loss`` and normalise the embeddings themselves where
    their definition requires it; the regulariser always sees the raw embeddings.
    """

    # A pair loss mines positives: batches must be P×K with K ≥ 2.
    traits: ClassVar[ComponentTraits] = ComponentTraits(needs_positives=True)
    # Help text of each user option, shown in the launch form.
    param_help: ClassVar[dict[str, str]] = {}

    def __init__(
        self,
        *,
        embedding_regularizer: nn.Module | None = None,
        embedding_reg_weight: float = 0.0,
    ) -> None:
        super().__init__()
        check_option("embedding_reg_weight", embedding_reg_weight, low=0)
        # A submodule, so learned regulariser state (center loss centres) is part of
        # ``loss.parameters()`` and of the state dict.
        self.embedding_regularizer = embedding_regularizer
        self.embedding_reg_weight = float(embedding_reg_weight)
        self.last_terms: dict[str, torch.Tensor] = {}
        # Set by a mining pair loss in ``compute_loss`` (``note_mining``); None otherwise.
        self.last_mining: MiningRecord | None = None

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Loss of a batch.

        ``embeddings``: N × d raw (un-normalised) embeddings, floating point.
        ``labels``: N integer labels (class ids, or instance ids when ``traits.requires_views``).
        Returns a 0-dim tensor. The term is computed (and logged in ``last_terms``) even
        with weight 0, so a baseline run still reports its regulariser value.
        """
        check_batch(embeddings, labels)
        self.last_mining = None
        metric = self.compute_loss(embeddings, labels)
        terms = {"metric": metric.detach()}
        total = metric
        if self.embedding_regularizer is not None:
            reg = self.embedding_regularizer(embeddings, labels)
            terms[regularizer_name(self.embedding_regularizer)] = reg.detach()
            total = total + self.embedding_reg_weight * reg
        self.last_terms = terms
        return total

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """The loss itself on N × d raw embeddings and N labels; a 0-dim tensor."""
        raise NotImplementedError

    def note_mining(
        self,
        active: torch.Tensor,
        candidates: torch.Tensor,
        similarity: torch.Tensor,
        negative: torch.Tensor,
    ) -> None:
        """Keep what the miner did on this batch (references only; reduced when logged)."""
        self.last_mining = MiningRecord(active, candidates, similarity.detach(), negative)


def regularizer_name(regularizer: nn.Module) -> str:
    """The key of a regulariser's term in ``last_terms`` (its registry name)."""
    return getattr(regularizer, "registered_name", "") or type(regularizer).__name__.lower()


def check_batch(embeddings: torch.Tensor, labels: torch.Tensor) -> None:
    """Raise ``ValueError`` unless embeddings are N × d floats and labels N integers."""
    if not isinstance(embeddings, torch.Tensor) or embeddings.dim() != 2:
        shape = tuple(embeddings.shape) if isinstance(embeddings, torch.Tensor) else None
        raise ValueError(f"embeddings: expected an N × d tensor, got shape {shape}")
    if not embeddings.is_floating_point():
        raise ValueError(f"embeddings: expected a floating-point dtype, got {embeddings.dtype}")
    if not isinstance(labels, torch.Tensor) or labels.dim() != 1:
        shape = tuple(labels.shape) if isinstance(labels, torch.Tensor) else None
        raise ValueError(f"labels: expected a 1-D tensor of N labels, got shape {shape}")
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise ValueError(f"labels: expected an integer dtype, got {labels.dtype}")
    if len(labels) != len(embeddings):
        raise ValueError(
            f"labels: {len(labels)} labels for {len(embeddings)} embeddings; "
            "they must have the same length N"
        )
    if len(embeddings) == 0:
        raise ValueError("embeddings: the batch is empty (N = 0)")
