"""Any timm model as a backbone: ``vit_small_patch16_224`` by name, the rest as ``timm/<name>``."""

from __future__ import annotations

import difflib
import functools
from typing import Any, ClassVar

from torch import Tensor, nn

from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.option_checks import OptionError
from sphere_engine.models.backbone import Backbone
from sphere_engine.models.pooling import PoolingName
from sphere_engine.models.registry import MODELS
from sphere_engine.tv_compat import torchvision  # noqa: F401 - timm imports torchvision

TIMM_PREFIX = "timm/"


def _timm() -> Any:
    """timm, imported on first use (slow to import; after the torchvision shim above)."""
    import timm

    return timm


class TimmBackbone(Backbone):
    """timm model ``timm_name`` without its classifier: ``forward_features`` is timm's
    (a feature map for CNNs, tokens for transformers). ``pooling`` reduces a map over
    its positions; for token outputs ``avg`` keeps the model's own pooling (the class
    token for ViT) and ``max`` / ``avg+max`` pool over the tokens. Transformers are
    built for ``data.image_size`` (timm's ``img_size``); their patch size is the
    smallest image side."""

    timm_name: ClassVar[str] = ""
    default_image_size = 224
    min_image_size = 8
    weights_source = "timm"
    param_help: ClassVar[dict[str, str]] = {
        "pooling": "Global pooling of the features: avg, max or avg+max",
        "model_args": "Extra timm.create_model arguments (depth, drop_path_rate, ...)",
    }

    def __init__(
        self,
        input_shape: tuple[int, ...],
        embedding_dim: int,
        embedding_bn: bool = False,
        weight_norm: bool = False,
        pooling: PoolingName = "avg",
        model_args: dict[str, Any] | None = None,
    ) -> None:
        self.check_image_shape(input_shape, self.timm_name)
        timm = _timm()
        args = {"num_classes": 0, "in_chans": input_shape[0], **(model_args or {})}
        try:
            net = timm.create_model(self.timm_name, img_size=tuple(input_shape[1:]), **args)
        except TypeError as error:
            if "img_size" not in str(error):
                raise OptionError("model_args", model_args, f"accepted by timm ({error})") from None
            try:
                net = timm.create_model(self.timm_name, **args)
            except TypeError as retry:
                raise OptionError("model_args", model_args, f"accepted by timm ({retry})") from None
        patch = getattr(getattr(net, "patch_embed", None), "patch_size", None)
        if patch is not None and min(input_shape[1:]) < max(patch):
            raise ConfigError(
                "data.image_size",
                f"{min(input_shape[1:])} is too small for {self.timm_name}; "
                f"its {max(patch)}-pixel patches need at least {max(patch)}",
            )
        super().__init__(net, net.num_features, embedding_dim, embedding_bn, weight_norm, pooling)
        self.classifier_prefixes = _classifier_prefixes(net)

    def forward_features(self, x: Tensor) -> Tensor:
        return self.features.forward_features(x)

    def forward_head(self, features: Tensor) -> Tensor:
        if features.dim() == 3 and self.pool.kind == "avg":
            return self.embedding(self.features.forward_head(features, pre_logits=True))
        return self.embedding(self.pool(features))


def _classifier_prefixes(net: nn.Module) -> tuple[str, ...]:
    names = net.pretrained_cfg.get("classifier") or "head"
    names = (names,) if isinstance(names, str) else tuple(names)
    return tuple(f"{name}." for name in names)


@MODELS.register("vit_small_patch16_224")
class ViTSmall(TimmBackbone):
    """ViT-S/16 (timm; 384 features, the class token)."""

    timm_name = "vit_small_patch16_224"


@functools.cache
def timm_family(name: str) -> type[TimmBackbone] | None:
    """The backbone class of timm model ``name`` (``timm/<name>``); unknown names raise
    with the close matches among timm's models."""
    timm = _timm()
    if not timm.is_model(name):
        close = difflib.get_close_matches(name, timm.list_models(), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(TIMM_PREFIX + c for c in close)}?" if close else ""
        raise ValueError(f"unknown model {TIMM_PREFIX + name!r}: timm has no model {name!r}{hint}")
    return type(f"Timm_{name}", (TimmBackbone,), {"timm_name": name, "__doc__": f"timm's {name}."})


MODELS.register_family(TIMM_PREFIX, timm_family)
