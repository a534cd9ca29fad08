"""Exported files: ONNX or TorchScript, a dynamic batch axis, the metadata inside.

The metadata is one JSON object under the key ``METADATA_KEY``: in an ONNX file's
``metadata_props``, in a TorchScript archive's ``_extra_files``. ONNX files come from
torch's ``torch.export``-based exporter (``onnxscript``) and run in onnxruntime;
TorchScript files from ``torch.jit.trace`` (deprecated in torch 2.13 but still
exported and loaded there).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

FORMATS = ("onnx", "torchscript")
METADATA_KEY = "spherescope"
INPUT_NAME, OUTPUT_NAME = "input", "embedding"
DEFAULT_OPSET = 18


@dataclass(frozen=True)
class ExportedModel:
    """An exported file loaded to run: its metadata and ``embed`` (inputs → embeddings,
    float32 numpy both ways)."""

    path: Path
    format: str
    metadata: dict[str, Any]
    embed: Callable[[np.ndarray], np.ndarray]


def export_model(
    module: torch.nn.Module,
    example: torch.Tensor,
    path: Path,
    fmt: str,
    metadata: dict[str, Any],
    opset: int = DEFAULT_OPSET,
) -> None:
    """Write ``module`` (eval mode, on the CPU) to ``path`` in ``fmt``, traced on
    ``example`` (at least 2 rows: the batch axis stays dynamic)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}; got {fmt!r}")
    text = json.dumps(metadata, allow_nan=False)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporters' deprecation and tracer notes
        if fmt == "torchscript":
            traced = torch.jit.trace(module, example, check_trace=False)
            torch.jit.save(traced, str(path), _extra_files={METADATA_KEY: text})
            return
        _export_onnx(module, example, path, text, opset)


def _export_onnx(
    module: torch.nn.Module, example: torch.Tensor, path: Path, text: str, opset: int
) -> None:
    import onnx

    batch = torch.export.Dim("batch")
    program = torch.onnx.export(
        module,
        (example,),
        dynamic_shapes=({0: batch},),
        input_names=[INPUT_NAME],
        output_names=[OUTPUT_NAME],
        opset_version=opset,
        dynamo=True,
        verbose=False,
    )
    proto = program.model_proto
    entry = proto.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, text
    onnx.save(proto, str(path))


def load_exported(path: str | Path) -> ExportedModel:
    """An exported file (ONNX by its content, else TorchScript) ready to run."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such model file")
    if _is_zip(path):
        return _load_torchscript(path)
    return _load_onnx(path)


def _is_zip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"PK\x03\x04"  # TorchScript archives are zip files


def _load_torchscript(path: Path) -> ExportedModel:
    files = {METADATA_KEY: ""}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in torch 2.13, still supported there
        module = torch.jit.load(str(path), map_location="cpu", _extra_files=files)
    metadata = _metadata(path, files[METADATA_KEY])

    def embed(inputs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module(torch.from_numpy(np.ascontiguousarray(inputs))).float().numpy()

    return ExportedModel(path, "torchscript", metadata, embed)


def _load_onnx(path: Path) -> ExportedModel:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    props = session.get_modelmeta().custom_metadata_map
    metadata = _metadata(path, props.get(METADATA_KEY, ""))
    name = session.get_inputs()[0].name

    def embed(inputs: np.ndarray) -> np.ndarray:
        feed = {name: np.ascontiguousarray(inputs, dtype=np.float32)}
        return np.asarray(session.run(None, feed)[0], dtype=np.float32)

    return ExportedModel(path, "onnx", metadata, embed)


def _metadata(path: Path, text: str | bytes) -> dict[str, Any]:
    if isinstance(text, bytes):
        text = text.decode()
    if not text:
        raise ValueError(f"{path}: no {METADATA_KEY!r} metadata (not exported by spherescope)")
    return json.loads(text)
