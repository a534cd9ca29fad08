"""Pretrained weights for a backbone, from a file or the local caches, never downloaded.

``model.pretrained`` is a path (``.pth`` / ``.pt`` / ``.safetensors``: a torchvision or
timm state dict, or a checkpoint holding one under ``state_dict`` / ``model``) or
``true`` for the file torchvision or timm would use, looked up in the local torch-hub
or Hugging Face cache only. The classifier's keys are dropped; every other key must
match the backbone in name and shape, or the run fails before it starts, naming the
file and the first mismatched keys.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from sphere_engine.config.config_error import ConfigError
from sphere_engine.models.backbone import Backbone

FIELD = "model.pretrained"
SUFFIXES = (".pth", ".pt", ".safetensors", ".bin", ".ckpt")
_SHOWN_KEYS = 3
_IGNORED = ("num_batches_tracked",)  # absent from old (Caffe-ported) files; counters only


@dataclass(frozen=True)
class PretrainedWeights:
    """Where a run's initial weights came from (recorded in the run's info)."""

    file: str
    sha256: str

    def as_info(self) -> dict[str, str]:
        return {"file": self.file, "sha256": self.sha256}


def wants_pretrained(value: bool | str) -> bool:
    return value is True or (isinstance(value, str) and value.strip() not in ("", "false"))


def weights_file(value: bool | str, model_name: str, backbone: nn.Module) -> Path:
    """The file ``model.pretrained = value`` names for ``model_name`` (``true``: the
    local cache's file); a missing file is a ``ValueError`` naming it."""
    if value is True or (isinstance(value, str) and value.strip().lower() == "true"):
        return cached_weights_file(model_name, backbone)
    path = Path(str(value)).expanduser()
    if not path.is_file():
        raise ConfigError(FIELD, f"weights file {str(path)!r} does not exist")
    if path.suffix.lower() not in SUFFIXES:
        raise ConfigError(
            FIELD, f"{str(path)!r} is not a weights file; use one of {', '.join(SUFFIXES)}"
        )
    return path


def cached_weights_file(model_name: str, backbone: nn.Module) -> Path:
    """The torch-hub (torchvision) or Hugging Face (timm) cache's weights of the
    backbone, without any download."""
    source = getattr(backbone, "weights_source", "")
    if source in ("torchvision", "torch_hub"):
        from sphere_engine.tv_compat import torchvision

        if source == "torchvision":
            weights = torchvision.models.get_model_weights(backbone.arch).DEFAULT
            filename = os.path.basename(weights.url)
        else:
            filename = backbone.hub_filename
        path = Path(torch.hub.get_dir()) / "checkpoints" / filename
        if path.is_file():
            return path
        raise ConfigError(
            FIELD,
            f"true, but {model_name}'s ImageNet weights are not in the local torch "
            f"hub cache ({str(path)!r}); put the file there or give its path",
        )
    if source == "timm":
        os.environ["HF_HUB_OFFLINE"] = "1"  # the cache only; never the network
        from huggingface_hub import try_to_load_from_cache

        repo = backbone.features.pretrained_cfg.get("hf_hub_id") or ""
        for filename in ("model.safetensors", "pytorch_model.bin"):
            found = try_to_load_from_cache(repo, filename) if repo else None
            if isinstance(found, str):
                return Path(found)
        raise ConfigError(
            FIELD,
            f"true, but no cached weights of {model_name} (Hugging Face repo "
            f"{repo or 'unknown'!r}) are on this machine; download them elsewhere or give a path",
        )
    raise ConfigError(
        FIELD, f"true, but {model_name} has no local weights cache; give a weights file path"
    )


def read_state_dict(path: Path) -> dict[str, Tensor]:
    """The tensors of a weights file (memory-mapped where possible); a file that is
    not one is a ``ValueError`` naming it."""
    try:
        if path.suffix.lower() == ".safetensors":
            from safetensors.torch import load_file

            state: Any = load_file(str(path))
        else:
            state = _torch_load(path)
    except Exception as error:  # a truncated or foreign file: any loader error
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ConfigError(
            FIELD, f"{str(path)!r} is not a readable weights file ({first})"
        ) from None
    for key in ("state_dict", "model"):
        if isinstance(state, dict) and isinstance(state.get(key), dict):
            state = state[key]
    if not isinstance(state, dict) or not all(isinstance(v, Tensor) for v in state.values()):
        raise ConfigError(FIELD, f"{str(path)!r} holds no state dict of tensors")
    return {_strip_prefix(k): v for k, v in state.items()}


def _torch_load(path: Path) -> Any:
    try:  # memory-mapped: validation reads only the keys and shapes
        return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except RuntimeError:  # files of the legacy (non-zip) format cannot be mapped
        return torch.load(path, map_location="cpu", weights_only=True)


def _strip_prefix(key: str) -> str:
    return key.removeprefix("module.")  # saved from DataParallel / DDP


def matched_state(backbone: Backbone, state: dict[str, Tensor], path: Path, name: str):
    """``state`` without the classifier, checked against the backbone's weights module
    and adapted (a first convolution of other input channels: the channel mean)."""
    target = backbone.weights_module().state_dict()
    classifier = getattr(backbone, "classifier_prefixes", ("fc.",))
    state = {k: v for k, v in state.items() if not k.startswith(classifier)}
    skipped = backbone.reinitialised_keys
    missing = [
        k for k in target if k not in state and k not in skipped and not k.endswith(_IGNORED)
    ]
    unexpected = [k for k in state if k not in target]
    shapes = []
    kept: dict[str, Tensor] = {}
    for key, value in state.items():
        if key not in target or key in skipped:
            continue
        want = target[key].shape
        if value.shape == want:
            kept[key] = value
        elif value.dim() == 4 and value.shape[0] == want[0] and value.shape[2:] == want[2:]:
            kept[key] = value.mean(1, keepdim=True).expand(want).clone()
        else:
            shapes.append(f"{key} {tuple(value.shape)} vs {tuple(want)}")
    problems = []
    if shapes:
        problems.append("shape mismatch: " + ", ".join(shapes[:_SHOWN_KEYS]))
    if missing:
        problems.append(f"missing {len(missing)} keys: " + ", ".join(missing[:_SHOWN_KEYS]))
    if unexpected:
        shown = ", ".join(unexpected[:_SHOWN_KEYS])
        problems.append(f"unexpected {len(unexpected)} keys: {shown}")
    if problems:
        raise ConfigError(FIELD, f"{str(path)!r} does not fit {name} ({'; '.join(problems)})")
    return kept


def load_pretrained(backbone: nn.Module, value: bool | str, name: str) -> PretrainedWeights:
    """Load the weights ``model.pretrained`` names into ``backbone`` (strictly, the
    classifier dropped) and return the file and its SHA-256."""
    if not isinstance(backbone, Backbone) or not backbone.default_image_size:
        raise ConfigError(FIELD, f"backbone {name!r} has no pretrained weights; leave it empty")
    path = weights_file(value, name, backbone)
    kept = matched_state(backbone, read_state_dict(path), path, name)
    module = backbone.weights_module()
    if not any(p.is_meta for p in module.parameters()):
        module.load_state_dict(kept, strict=False)
    return PretrainedWeights(str(path.resolve()), file_sha256(path))


def check_pretrained(backbone: nn.Module, value: bool | str, name: str) -> None:
    """Launch-time check: the file exists, reads and fits (nothing is loaded)."""
    if not isinstance(backbone, Backbone) or not backbone.default_image_size:
        raise ConfigError(FIELD, f"backbone {name!r} has no pretrained weights; leave it empty")
    path = weights_file(value, name, backbone)
    matched_state(backbone, read_state_dict(path), path, name)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
