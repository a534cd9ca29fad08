"""The last layer of every backbone: a linear map to the embedding."""

from __future__ import annotations

from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm as apply_weight_norm

from sphere_engine.config.config_error import ConfigError


class EmbeddingLayer(nn.Module):
    """Linear (in_features → embedding_dim), optionally weight-normalised (the weight is
    reparametrised as g · v / ||v|| per output unit), optionally followed by BatchNorm1d
    on the embedding. Outputs raw, unnormalised embeddings: losses normalise them."""

    def __init__(
        self,
        in_features: int,
        embedding_dim: int,
        embedding_bn: bool = False,
        weight_norm: bool = False,
    ) -> None:
        super().__init__()
        if in_features < 1:
            raise ValueError(f"in_features: {in_features} must be >= 1")
        if embedding_dim < 1:
            raise ConfigError("model.embedding_dim", f"{embedding_dim} must be >= 1")
        linear = nn.Linear(in_features, embedding_dim)
        self.linear = apply_weight_norm(linear) if weight_norm else linear
        self.bn = nn.BatchNorm1d(embedding_dim) if embedding_bn else nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        """``x``: features (N, in_features). Returns embeddings (N, embedding_dim)."""
        return self.bn(self.linear(x))
