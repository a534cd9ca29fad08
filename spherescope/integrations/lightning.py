"""PyTorch Lightning: ``SphereScopeCallback`` logs embedding geometry of a LightningModule.

Embeddings come from ``training_step``'s output dict (``key``, default ``"embeddings"``;
labels from ``labels_key`` or the batch's second element) or, with ``module="name"``,
from a forward hook on that submodule. Both see the tensor before ``backward``, so the
gradient statistics are logged too. At the end of each validation epoch the validation
embeddings (same source) are evaluated as a training run's evaluation is.

    trainer = Trainer(callbacks=[SphereScopeCallback(name="cub", config=vars(args))])

Under ``ddp``, ``ddp_spawn``, ``ddp_find_unused_parameters_true`` (any strategy with a
process group) the job is one run with the global batch's statistics: the callback
starts the run on every rank once the strategy has set up its process group, and
the validation shards (``DistributedSampler``'s, padding dropped) are gathered and
evaluated once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from sphere_engine import tv_compat
from spherescope.integrations._common import Collected, RunOwner, pooled
from spherescope.run import Run

# lightning imports torchmetrics, which imports torchvision: on a CPU-only torch the
# torchvision wheel needs its missing operator schemas defined first (see tv_compat)
tv_compat.define_missing_ops()

from lightning.pytorch import LightningModule, Trainer  # noqa: E402
from lightning.pytorch.callbacks import Callback  # noqa: E402


class SphereScopeCallback(Callback):
    def __init__(
        self,
        run: Run | None = None,
        *,
        key: str = "embeddings",
        labels_key: str = "labels",
        module: str | None = None,
        pooling: str | Callable[[Any], torch.Tensor] = "first",
        evaluate: bool = True,
        **init_kwargs: Any,
    ) -> None:
        """``run``: an open ``spherescope`` run, else one is started at fit start with
        ``init_kwargs`` (name, config, tags, home, log_every, tracked, strict)."""
        self.owner = RunOwner(run, init_kwargs)
        self.key, self.labels_key, self.module_name = key, labels_key, module
        self.pooling = pooling
        self.evaluate = evaluate
        self.validation = Collected()
        self._hook: Any = None
        self._original_step: Any = None
        self._batch_labels: Any = None
        self._pending_validation: torch.Tensor | None = None

    @property
    def run(self) -> Run:
        return self.owner.ensure()

    # -- fit ---------------------------------------------------------------------------
    def on_fit_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self.owner.ensure(launcher=f"lightning {_strategy_name(trainer)}")
        if self.module_name is not None:
            target = pl_module.get_submodule(self.module_name)
            self._hook = target.register_forward_hook(self._forward_hook(trainer, pl_module))
        else:
            self._wrap_training_step(trainer, pl_module)

    def on_fit_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self._detach(pl_module)
        self.owner.end()

    def on_exception(
        self, trainer: Trainer, pl_module: LightningModule, exception: BaseException
    ) -> None:
        self._detach(pl_module)
        self.owner.end("failed", f"{type(exception).__name__}: {exception}")

    # -- training batches ----------------------------------------------------------------
    def on_train_batch_start(
        self, trainer: Trainer, pl_module: LightningModule, batch: Any, batch_idx: int
    ) -> None:
        self._batch_labels = _batch_labels(batch)

    def _wrap_training_step(self, trainer: Trainer, pl_module: LightningModule) -> None:
        original = pl_module.training_step
        self._original_step = original

        def training_step(*args: Any, **kwargs: Any) -> Any:
            output = original(*args, **kwargs)
            if isinstance(output, dict) and self.key in output:
                labels = output.get(self.labels_key, self._batch_labels)
                self.run.log_embeddings(output[self.key], labels, step=trainer.global_step + 1)
            return output

        pl_module.training_step = training_step  # type: ignore[method-assign]

    def _forward_hook(self, trainer: Trainer, pl_module: LightningModule) -> Callable[..., None]:
        def hook(module: torch.nn.Module, inputs: Any, output: Any) -> None:
            if trainer.sanity_checking:
                return
            embeddings = pooled(output, self.pooling)
            if trainer.training:
                step = trainer.global_step + 1
                self.run.log_embeddings(embeddings, self._batch_labels, step=step)
            else:  # validation: kept until on_validation_batch_end pairs it with labels
                self._pending_validation = embeddings

        return hook

    # -- validation ------------------------------------------------------------------------
    def on_validation_batch_end(
        self,
        trainer: Trainer,
        pl_module: LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        if trainer.sanity_checking or not self.evaluate:
            return
        if self.module_name is not None:
            embeddings = self._pending_validation
            self._pending_validation = None
            labels = _batch_labels(batch)
        elif isinstance(outputs, dict) and self.key in outputs:
            embeddings = outputs[self.key]
            labels = outputs.get(self.labels_key, _batch_labels(batch))
        else:
            return
        if embeddings is not None and labels is not None:
            self.validation.add(embeddings, labels)

    def on_validation_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        collected = self.validation.take()
        if collected is None or trainer.sanity_checking:
            return
        # a data-parallel job: every rank evaluates its shard together (collective)
        size = _dataset_size(trainer.val_dataloaders) if trainer.world_size > 1 else None
        self.run.evaluate(*collected, step=trainer.global_step, dataset_size=size)

    def _detach(self, pl_module: LightningModule) -> None:
        if self._hook is not None:
            self._hook.remove()
            self._hook = None
        if self._original_step is not None:
            del pl_module.training_step  # back to the class's method
            self._original_step = None


def _strategy_name(trainer: Trainer) -> str:
    """As the strategy is registered: ddp, ddp_spawn, ddp_find_unused_parameters_true..."""
    strategy = trainer.strategy
    name = type(strategy).__name__.removesuffix("Strategy").lower()
    start_method = getattr(strategy, "_start_method", "popen")
    if start_method != "popen":
        name += f"_{start_method}"
    if getattr(strategy, "_ddp_kwargs", {}).get("find_unused_parameters"):
        name += "_find_unused_parameters_true"
    return name


def _dataset_size(loaders: Any) -> int | None:
    """The validation set's length (DistributedSampler pads the shards to equal size)."""
    loader = loaders[0] if isinstance(loaders, (list, tuple)) and len(loaders) == 1 else loaders
    try:
        return len(loader.dataset)
    except (AttributeError, TypeError):  # several loaders, or an iterable data set
        return None


def _batch_labels(batch: Any) -> Any:
    if isinstance(batch, (tuple, list)) and len(batch) >= 2:
        return batch[1]
    if isinstance(batch, dict):
        return batch.get("labels", batch.get("label"))
    return None
