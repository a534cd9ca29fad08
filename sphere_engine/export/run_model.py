"""A run's embedding model from a checkpoint, exported and checked on its test split.

The PyTorch side is the run's own: its dataset and evaluated test subset
(``Evaluator``), its model rebuilt from the config and the checkpoint's state dict. The
exported side sees only pixels in [0, 1] and the file's metadata (``preprocess``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sphere_engine.config import RunConfig
from sphere_engine.export.check import ExportCheck, compare_embeddings
from sphere_engine.export.formats import export_model, load_exported
from sphere_engine.export.preprocessing import embedding_module, preprocess, preprocessing_of

CHECK_BATCH = 256


def run_model(config: RunConfig, state: dict[str, Any]) -> tuple[torch.nn.Module, Any]:
    """The run's backbone with the checkpoint's weights (eval mode, CPU) and its splits."""
    from sphere_engine.data import create_dataset
    from sphere_engine.models.build import build_backbone
    from sphere_engine.validation.image_size import resolved_data_options

    data = config.data
    splits = create_dataset(
        data.name, root=data.root, split=data.split, download=False,
        seed=config.training.seed, **resolved_data_options(config),
    )  # fmt: skip
    # The checkpoint holds every weight: no pretrained file is read again.
    model_config = dataclasses.replace(config.model, pretrained=False)
    model, _ = build_backbone(model_config, splits.input_shape)
    model.load_state_dict(state["model"])
    return model.eval(), splits


def round_to_fp16(model: torch.nn.Module) -> torch.nn.Module:
    """Every floating weight and buffer rounded to fp16 (kept fp32 for fp32 compute)."""
    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            if tensor.is_floating_point():
                tensor.copy_(tensor.half().float())
    return model


def export_and_check(
    config: RunConfig,
    state: dict[str, Any],
    out: Path,
    fmt: str,
    metadata: dict[str, Any],
    metric_names: Sequence[str],
    *,
    normalize: bool = False,
    fp16: bool = False,
    opset: int = 18,
) -> ExportCheck:
    """Export the run's embedding model to ``out`` and check it (module doc).
    ``metadata`` gets the preprocessing and the mode; ``metric_names``: the metrics of
    the run's final evaluation to recompute on both sides."""
    from sphere_engine.evaluation.evaluator import Captured, Evaluator

    model, splits = run_model(config, state)
    reference_module = embedding_module(model, normalize)
    evaluator = Evaluator(splits, config, torch.device("cpu"))
    pytorch, labels = evaluator.embed(reference_module)
    pytorch = pytorch.float().numpy()

    exported_module = embedding_module(round_to_fp16(run_model(config, state)[0]), normalize)
    preprocessing = preprocessing_of(tuple(splits.input_shape), splits.pixel_range)
    metadata = metadata | {"preprocessing": preprocessing, "normalized": normalize}
    metadata["weights"] = "fp16 (fp32 compute on CPU)" if fp16 else "fp32"
    example = torch.zeros(2, *splits.input_shape)
    export_model(exported_module if fp16 else reference_module, example, out, fmt, metadata, opset)

    exported = load_exported(out)
    embeddings = np.concatenate(
        [
            exported.embed(preprocess(pixels, exported.metadata["preprocessing"]))
            for pixels in evaluated_pixels(splits, evaluator.indices)
        ]
    )

    def metrics_of(points: np.ndarray) -> dict[str, float]:
        from sphere_engine.tracking import InMemoryTracker

        captured = Captured(points, labels, None, None, None, None)
        return evaluator.compute(captured, InMemoryTracker(), 0)

    return compare_embeddings(
        embeddings, pytorch, metrics_of(embeddings), metrics_of(pytorch), list(metric_names), fp16
    )


def evaluated_pixels(splits: Any, indices: np.ndarray) -> list[np.ndarray]:
    """The evaluated test samples as pixels in [0, 1] (inputs as they are where the
    dataset declares no pixel range), in batches."""
    from sphere_engine.data.batches import iter_inputs

    batches = []
    for inputs in iter_inputs(splits.test, indices, CHECK_BATCH):
        if splits.pixel_range is not None:
            inputs = splits.pixel_range.to_pixels(inputs.float())
        batches.append(inputs.float().numpy())
    return batches
