"""``TupletMarginLoss`` with the intra-pair variance term (Yu & Tao, ICCV 2019)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from sphere_engine.config.option_checks import check_option
from sphere_engine.losses.base_loss import BaseLoss
from sphere_engine.losses.pair_utils import cosine_matrix, pair_masks
from sphere_engine.losses.registry import LOSSES

# Keeps acos differentiable for coincident points (its slope is infinite at ±1).
_COS_CLAMP = 1e-6


@LOSSES.register("tuplet_margin")
class TupletMarginLoss(BaseLoss):
    """Tuplet margin loss plus λ × intra-pair variance.

    For each anchor-positive pair (a, p) with angle θ_ap and all negatives n of a:
      L_tuplet(a, p) = log(1 + Σ_n exp(s (cos θ_an − cos(θ_ap − β)))),
    averaged over anchor-positive pairs; β (radians) slackens the positive angle.
    Intra-pair variance, with E the batch means:
      L_ipv = mean_pos [(1 − ε) E[cos θ_ap] − cos θ_ap]²_+
            + mean_neg [cos θ_an − (1 + ε) E[cos θ_an]]²_+.
    L = L_tuplet + λ L_ipv. Parts without pairs contribute 0.
    As in Yu & Tao and pytorch-metric-learning, the gradient flows through the means E[·]
    (``detach_means=False``). Unlike SEC's μ, detaching them is not a no-op: the hinge
    keeps only one side of the mean, so the terms' derivatives w.r.t. E do not cancel.
    ``detach_means=True`` treats the means as constant targets (a variant, off by default).
    """

    param_help: ClassVar[dict[str, str]] = {
        "margin": "β, angular slack subtracted from the positive angle (radians; 0.1 rad ≈ 5.73°)",
        "scale": "s, scale of the cosine logits (inverse temperature)",
        "lambda_ipv": "λ, weight of the intra-pair variance term (0 turns it off)",
        "eps": "ε, relative slack of the intra-pair variance targets (unitless)",
        "detach_means": "treat the batch means E[cos θ] of the variance term as constants "
        "(a variant; the paper lets the gradient flow through them)",
    }

    def __init__(
        self,
        *,
        margin: float = 0.1,
        scale: float = 64.0,
        lambda_ipv: float = 0.5,
        eps: float = 0.01,
        detach_means: bool = False,
        **base: Any,
    ) -> None:
        super().__init__(**base)
        check_option("margin", margin, low=0.0, high=torch.pi)
        check_option("scale", scale, low=0, low_open=True)
        check_option("lambda_ipv", lambda_ipv, low=0)
        check_option("eps", eps, low=0.0, high=1.0)
        self.margin, self.scale, self.lambda_ipv, self.eps = margin, scale, lambda_ipv, eps
        if not isinstance(detach_means, bool):
            raise ValueError(f"detach_means: {detach_means!r} is not allowed; use true or false")
        self.detach_means = detach_means

    def compute_loss(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        sim = cosine_matrix(embeddings).clamp(-1 + _COS_CLAMP, 1 - _COS_CLAMP)  # N × N
        positive, negative = pair_masks(labels)
        anchor, pos = positive.nonzero(as_tuple=True)  # M anchor-positive pairs
        cos_ap = sim[anchor, pos]  # M
        slackened = torch.cos(torch.acos(cos_ap) - self.margin)
        logits = self.scale * (sim[anchor] - slackened[:, None])  # M × N
        logits = logits.masked_fill(~negative[anchor], float("-inf"))
        zeros = torch.zeros_like(cos_ap)[:, None]
        tuplet = torch.logsumexp(torch.cat([zeros, logits], dim=1), dim=1)  # M
        cos_an = sim[negative]
        mean_ap, mean_an = mean_or_zero(cos_ap), mean_or_zero(cos_an)
        if self.detach_means:
            mean_ap, mean_an = mean_ap.detach(), mean_an.detach()
        pos_target = (1 - self.eps) * mean_ap
        neg_target = (1 + self.eps) * mean_an
        ipv = mean_or_zero((pos_target - cos_ap).clamp(min=0) ** 2) + mean_or_zero(
            (cos_an - neg_target).clamp(min=0) ** 2
        )
        return mean_or_zero(tuplet) + self.lambda_ipv * ipv


def mean_or_zero(values: torch.Tensor) -> torch.Tensor:
    """Mean of a 1-D tensor, or a 0 attached to its graph when it is empty."""
    return values.sum() / max(len(values), 1)
