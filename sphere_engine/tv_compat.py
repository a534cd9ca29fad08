"""Import torchvision on a CPU-only torch build.

Why this exists: the PyPI wheel of torchvision 0.28.0 is built against CUDA. On a
CPU-only torch its C++ extension fails to load, so the ``torchvision::*`` operators
are never defined, and ``import torchvision`` dies in ``torchvision/_meta_registrations``
with ``RuntimeError: operator torchvision::nms does not exist``: that module
registers fake (meta) kernels for ``nms`` and ``qnms`` unconditionally, which needs
their schemas to exist. (Its other meta kernels are guarded by ``_has_ops()``.)

The fix: define those two schemas, exactly as torchvision's C++ code declares them,
before torchvision is imported. Datasets, transforms and models are pure Python
and then work. The detection ops themselves (``torchvision.ops.nms`` and friends)
remain unavailable on such a build; SphereScope never uses them.

On a torch build where torchvision's extension loads (a CUDA torch with the CUDA
wheel), the operators already exist and this module defines nothing.

Always import torchvision through this module::

    from sphere_engine.tv_compat import torchvision
"""

from __future__ import annotations

import contextlib

import torch

# Schemas copied from torchvision/csrc/ops/nms.cpp and quantized/cpu/qnms_kernel.cpp.
_MISSING_OP_SCHEMAS: dict[str, str] = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}

# Kept alive for the life of the process: dropping a Library object removes its ops.
_LIBRARY: torch.library.Library | None = None


def _op_exists(name: str) -> bool:
    try:
        torch._C._dispatch_find_schema_or_throw(f"torchvision::{name}", "")
    except RuntimeError:
        return False
    return True


def define_missing_ops() -> list[str]:
    """Define the torchvision operator schemas that a failed extension load left out.

    Returns the names defined (empty when the extension loaded and nothing was needed).
    Safe to call more than once.
    """
    global _LIBRARY
    missing = [name for name in _MISSING_OP_SCHEMAS if not _op_exists(name)]
    if not missing:
        return []
    if _LIBRARY is None:
        _LIBRARY = torch.library.Library("torchvision", "FRAGMENT")
    for name in missing:
        _LIBRARY.define(_MISSING_OP_SCHEMAS[name])
    return missing


def _try_load_extension() -> None:
    """Load torchvision's C++ extension the way torchvision would, without importing it.

    On a matching build this defines the real operators; on a mismatched one it fails
    (missing CUDA libraries or symbols) and we carry on with schemas only.
    """
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("torchvision is not installed (pip install torchvision==0.28.0)")
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    for library in sorted(package_dir.glob("_C*.so")):
        with contextlib.suppress(OSError, RuntimeError):
            torch.ops.load_library(str(library))


def _import_torchvision():  # returns the torchvision module
    import importlib
    import sys

    if "torchvision" not in sys.modules:
        _try_load_extension()
        define_missing_ops()
    return importlib.import_module("torchvision")


torchvision = _import_torchvision()

__all__ = ["define_missing_ops", "torchvision"]
