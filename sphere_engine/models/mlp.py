"""Multi-layer perceptron backbone for vector data."""

from __future__ import annotations

import math
from typing import ClassVar, Literal

from torch import nn

from sphere_engine.config.option_checks import OptionError, check_choice
from sphere_engine.models.backbone import Backbone
from sphere_engine.models.registry import MODELS

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "prelu": nn.PReLU,
    "gelu": nn.GELU,
    "tanh": nn.Tanh,
}


@MODELS.register("mlp")
class MLP(Backbone):
    """Flattens the input, then Linear + activation per hidden layer, then the
    embedding layer. Any input shape works (images are flattened)."""

    param_help: ClassVar[dict[str, str]] = {
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
        check_choice("activation", activation, ACTIVATIONS)
        if any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in hidden_dims):
            raise OptionError("hidden_dims", list(hidden_dims), "integers >= 1")
        layers: list[nn.Module] = [nn.Flatten()]
        width = math.prod(input_shape)
        for hidden in hidden_dims:
            layers += [nn.Linear(width, int(hidden)), ACTIVATIONS[activation]()]
            width = int(hidden)
        super().__init__(nn.Sequential(*layers), width, embedding_dim, embedding_bn, weight_norm)
