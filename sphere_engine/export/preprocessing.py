"""What an exported model expects of its inputs, as plain JSON values.

A run's model inputs are ``(pixels − mean) / std`` with pixels scaled to [0, 1]
(``PixelRange``: per channel (C, 1, 1) for images, per feature for standardised
vectors); datasets without pixels (synthetic vectors) feed their inputs as they are.
``preprocessing_of`` writes that down; ``preprocess`` turns pixels into inputs from
those values alone, so a deployment (or ``spherescope embed``) needs nothing else.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F


def preprocessing_of(input_shape: tuple[int, ...], pixel_range: Any) -> dict[str, Any]:
    """The preprocessing a model with ``input_shape`` inputs and ``pixel_range`` (a
    ``PixelRange`` or None) expects, JSON-plain."""
    image = len(input_shape) == 3
    return {
        "input_shape": [int(size) for size in input_shape],  # of one sample; batch first
        "layout": "NCHW" if image else "N" + "x".join(str(s) for s in input_shape),
        "image_size": [int(input_shape[1]), int(input_shape[2])] if image else None,
        "pixel_range": None if pixel_range is None else [0.0, 1.0],
        "pixel_scale": None if pixel_range is None else "uint8 pixels / 255",
        "mean": None if pixel_range is None else pixel_range.mean.tolist(),
        "std": None if pixel_range is None else pixel_range.std.tolist(),
    }


def preprocess(pixels: np.ndarray, preprocessing: dict[str, Any]) -> np.ndarray:
    """Model inputs (float32, N × input shape) from pixels in the declared range (or
    the raw inputs where none is declared), with ``preprocessing``'s values alone."""
    shape = tuple(preprocessing["input_shape"])
    inputs = np.asarray(pixels, dtype=np.float32)
    if len(shape) == 3 and shape[0] == 1 and inputs.ndim == 3:
        inputs = inputs[:, None]  # grey images given as N × H × W
    if inputs.shape[1:] != shape:
        raise ValueError(
            f"inputs have shape {tuple(inputs.shape[1:])} per sample; the model expects "
            f"{shape} (preprocessing input_shape)"
        )
    if preprocessing.get("pixel_range") is None:
        return np.ascontiguousarray(inputs)
    mean = np.asarray(preprocessing["mean"], dtype=np.float32)
    std = np.asarray(preprocessing["std"], dtype=np.float32)
    return np.ascontiguousarray((inputs - mean) / std, dtype=np.float32)


class EmbeddingModule(torch.nn.Module):
    """The run's backbone + embedding layer; L2-normalised output with ``normalize``."""

    def __init__(self, model: torch.nn.Module, normalize: bool) -> None:
        super().__init__()
        self.model, self.normalize = model, normalize

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        embeddings = self.model(inputs)
        return F.normalize(embeddings, dim=1) if self.normalize else embeddings


def embedding_module(model: torch.nn.Module, normalize: bool) -> EmbeddingModule:
    """``model`` (in eval mode) wrapped for export."""
    return EmbeddingModule(model.eval(), normalize).eval()
