"""Multi-layer perceptron backbone for vector data."""

from __future__ import annotations

import math
from typing import Literal

from torch import Tensor, nn

from sphere_engine.models.embedding_layer import EmbeddingLayer
from sphere_engine.models.model_registry import MODELS

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "prelu": nn.PReLU,
    "gelu": nn.GELU,
    "tanh": nn.Tanh,
}


@MODELS.register("mlp")
class MLP(nn.Module):
    """Flattens the input, then Linear + activation per hidden layer, then the
    embedding layer. Any input shape works (images are flattened)."""

    param_help = {  # noqa: RUF012
        "hidden_dims": "Widths of the hidden layers (empty: a single linear map)",
        "activation": "Activation after each hidden layer",
    }

    def __init__(
        self,
        input_shape: tuple[int, ...],
        embedding_dim: int,
        embedding_bn: bool = False,
        weight_norm: bool = False,
        hidden_dims: tuple[int, ...] = (128, 128),
        activation: Literal["relu", "prelu", "gelu", "tanh"] = "relu",
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"model.options.activation: {activation!r} is not allowed; choose one of "
                + ", ".join(ACTIVATIONS)
            )
        if any(int(width) < 1 for width in hidden_dims):
            raise ValueError(f"model.options.hidden_dims: {list(hidden_dims)} must be >= 1 each")
        layers: list[nn.Module] = [nn.Flatten()]
        width = math.prod(input_shape)
        for hidden in hidden_dims:
            layers += [nn.Linear(width, int(hidden)), ACTIVATIONS[activation]()]
            width = int(hidden)
        self.features = nn.Sequential(*layers)
        self.embedding = EmbeddingLayer(width, embedding_dim, embedding_bn, weight_norm)

    def forward(self, x: Tensor) -> Tensor:
        """``x``: (N, *input_shape). Returns embeddings (N, embedding_dim)."""
        return self.embedding(self.features(x))
