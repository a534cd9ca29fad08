"""``CosineMarginLoss``: the base of the triplet family, which share one option."""

from __future__ import annotations

from typing import Any

from sphere_engine.config.option_checks import check_option
from sphere_engine.losses.base_loss import BaseLoss


class CosineMarginLoss(BaseLoss):
    """A loss with a ``margin`` between cosine similarities (unitless, in [0, 2]).

    Subclasses write ``compute_loss`` and their own ``param_help``.
    """

    def __init__(self, *, margin: float = 0.1, **base: Any) -> None:
        super().__init__(**base)
        check_option("margin", margin, low=0.0, high=2.0)
        self.margin = margin
