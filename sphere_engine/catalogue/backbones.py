"""The registered backbones' sizes, declared once without torch (the Launch form lists
them; ``tests/sphere_engine/models/test_backbones.py`` builds every registered backbone
and checks its declaration, so a new backbone without one, or a changed one, fails).

A backbone is its trunk (features → pooling) and the embedding layer: a linear map from
``features`` to the embedding (plus BatchNorm's affine pair or weight norm's gain per
embedding unit when asked). The trunk is counted at a reference input: the image size
the backbone was published at (a ViT's position table grows with its patch grid), 64
features for the MLP (digits), 1 × 28 × 28 for LeNet++ (MNIST).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackboneSize:
    trunk: int  # parameters before the embedding layer, at ``reference_input``
    features: int  # width of the pooled features the embedding layer maps
    reference_input: tuple[int, ...]  # the input (C, H, W) or (D,) the trunk is counted at

    def parameters(
        self, embedding_dim: int, embedding_bn: bool = False, weight_norm: bool = False
    ) -> int:
        """Trainable parameters with an ``embedding_dim`` embedding."""
        per_unit = self.features + 1 + (2 if embedding_bn else 0) + (1 if weight_norm else 0)
        return self.trunk + per_unit * embedding_dim


BACKBONE_SIZES: dict[str, BackboneSize] = {
    "mlp": BackboneSize(24_832, 128, (64,)),
    "lenetpp": BackboneSize(794_854, 1152, (1, 28, 28)),
    "resnet18": BackboneSize(11_176_512, 512, (3, 224, 224)),
    "resnet50": BackboneSize(23_508_032, 2048, (3, 224, 224)),
    "bninception": BackboneSize(10_270_240, 1024, (3, 227, 227)),
    "vit_small_patch16_224": BackboneSize(21_665_664, 384, (3, 224, 224)),
}


def backbone_parameters(name: str, embedding_dim: int) -> int | None:
    """Parameters of registered backbone ``name`` with an ``embedding_dim`` embedding
    (no BN, no weight norm), or None for a name without a declaration (``timm/<name>``)."""
    size = BACKBONE_SIZES.get(name)
    return None if size is None else size.parameters(embedding_dim)


def format_parameters(count: int) -> str:
    """``24.6 M``, ``91 k``."""
    return f"{count / 1e6:.1f} M" if count >= 1_000_000 else f"{count / 1e3:.0f} k"
