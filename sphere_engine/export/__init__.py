"""Taking a trained embedding model out: exported files that carry their preprocessing,
and the check that they give the embeddings (and the metrics) PyTorch gives.

- ``preprocessing.py``: what the model expects (input shape, pixel range, mean / std)
  as plain JSON values, and the inputs computed from pixels with those values alone;
- ``formats.py``: ONNX (torch's exporter, onnxruntime to run it) and TorchScript files
  with a dynamic batch axis and the metadata inside, and ``load_exported`` for both;
- ``check.py``: exported vs PyTorch embeddings (max 1 − cos) and metrics.
"""

from sphere_engine.export.check import ExportCheck, compare_embeddings
from sphere_engine.export.formats import FORMATS, ExportedModel, export_model, load_exported
from sphere_engine.export.preprocessing import embedding_module, preprocess, preprocessing_of

__all__ = [
    "FORMATS",
    "ExportCheck",
    "ExportedModel",
    "compare_embeddings",
    "embedding_module",
    "export_model",
    "load_exported",
    "preprocess",
    "preprocessing_of",
]
