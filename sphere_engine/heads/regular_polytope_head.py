"""``RegularPolytopeHead``: a fixed (never trained) classifier on polytope vertices."""

from __future__ import annotations

import math
from typing import ClassVar, Literal

import torch
import torch.nn.functional as F

from sphere_engine.config.option_checks import OptionError, check_option
from sphere_engine.heads.classifier_head import ClassifierHead
from sphere_engine.heads.margins import additive_angular_margin, replace_target, target_cosine
from sphere_engine.heads.polytopes import polytope_angle, polytope_dim, polytope_vertices
from sphere_engine.registry import ComponentTraits


class RegularPolytopeHead(ClassifierHead):
    """logits_j = κ·cos θ_j between the normalised feature and fixed vertex j; zero bias.

    The weights are the ``vertices`` buffer (K × embedding_dim, unit rows; zero-padded
    beyond the polytope's own dimension), so no optimiser or weight decay can move them.
    With labels and a margin m > 0 the target is κ·cos(θ_y + m), ArcFace style (with
    its fallback κ·(cos θ_y − m·sin m) where θ_y + m > π); ``margin="auto"`` uses
    m = φ, the angle between neighbouring vertices of the polytope (RePoNets).
    Subclasses set ``kind``.
    """

    traits: ClassVar[ComponentTraits] = ComponentTraits(
        is_fixed=True, needs_num_classes=True, needs_embedding_dim=True
    )
    kind: ClassVar[str] = ""
    param_help: ClassVar[dict[str, str]] = {
        "scale": "κ: logit scale applied to cos θ (the paper uses 30)",
        "margin": "m: additive ANGULAR margin in RADIANS (ArcFace style) on the target; "
        '"auto" = φ, the angle between neighbouring vertices of the polytope; 0 = none',
    }

    vertices: torch.Tensor

    def __init__(
        self,
        embedding_dim: int,
        num_classes: int,
        scale: float = 30.0,
        margin: float | Literal["auto"] = 0.0,
    ) -> None:
        super().__init__(embedding_dim, num_classes)
        self.scale = check_option("scale", scale, low=0, low_open=True)
        #: The polytope's own dimension (≤ embedding_dim; the rest is zero padding).
        self.polytope_dim = polytope_dim(self.kind, self.num_classes)
        if self.embedding_dim < self.polytope_dim:
            raise ValueError(
                f"embedding_dim={self.embedding_dim} is too small for a {self.kind} head with "
                f"num_classes={self.num_classes}; allowed: embedding_dim >= {self.polytope_dim}"
            )
        self._margin = self._resolve_margin(margin)
        self.register_buffer(
            "vertices", polytope_vertices(self.kind, self.num_classes, self.embedding_dim)
        )

    @property
    def vertex_angle(self) -> float:
        """φ: angle (radians) between a vertex and its nearest vertices."""
        return polytope_angle(self.kind, self.polytope_dim)

    @property
    def margin_radians(self) -> float:
        """The additive angular margin actually applied, in radians (φ for "auto")."""
        return self._margin

    def compute_logits(self, embeddings: torch.Tensor, labels: torch.Tensor | None) -> torch.Tensor:
        cosine = F.linear(F.normalize(embeddings, dim=1), self.vertices.to(embeddings.dtype))
        if labels is not None and self._margin > 0:
            target = additive_angular_margin(target_cosine(cosine, labels), self._margin)
            cosine = replace_target(cosine, labels, target)
        return self.scale * cosine

    def _resolve_margin(self, margin: float | str) -> float:
        if margin == "auto":
            return self.vertex_angle
        try:
            return check_option("margin", margin, low=0, high=math.pi)
        except OptionError:
            raise OptionError("margin", margin, "'auto' or radians in [0, π]") from None

    def extra_repr(self) -> str:
        return (
            f"{super().extra_repr()}, kind={self.kind}, polytope_dim={self.polytope_dim}, "
            f"scale={self.scale}, margin_radians={self._margin:.4f}"
        )
