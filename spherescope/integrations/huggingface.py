"""Hugging Face ``transformers`` Trainer (and sentence-transformers' trainer built on it).

``SphereScopeCallback(module="bert.pooler")`` hooks that submodule's forward output
(pooled to N × d: first token by default, or ``pooling="mean"`` / a callable) and the
model's ``labels`` argument. Training steps get the per-step diagnostics, with the
gradient statistics; each ``evaluate`` gets the evaluation metrics and a snapshot.

    trainer = Trainer(model, args, ..., callbacks=[SphereScopeCallback(module="bert.pooler")])

Under ``torchrun`` or ``accelerate launch`` every process runs the callback: the job
is one run with the global batch's statistics (the Trainer has set up the process
group before training begins), and the evaluation shards, which Accelerate deals a
batch at a time and completes from the start, are gathered and evaluated once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

from sphere_engine import tv_compat
from spherescope.integrations._common import Collected, RunOwner, pooled
from spherescope.run import Run

# transformers imports torchvision for its image models: on a CPU-only torch the
# torchvision wheel needs its missing operator schemas defined first (see tv_compat)
tv_compat.define_missing_ops()

from transformers import (  # noqa: E402
    TrainerCallback,
    TrainerControl,
    TrainerState,
    TrainingArguments,
)


class SphereScopeCallback(TrainerCallback):
    def __init__(
        self,
        run: Run | None = None,
        *,
        module: str,
        labels_arg: str = "labels",
        pooling: str | Callable[[Any], torch.Tensor] = "first",
        evaluate: bool = True,
        **init_kwargs: Any,
    ) -> None:
        """``run``: an open ``spherescope`` run, else one is started when training
        begins, with ``init_kwargs`` (name, config, tags, home, log_every, tracked, strict)."""
        if not isinstance(module, str) or not module:
            raise ValueError("module must name the submodule whose output is the embedding")
        self.owner = RunOwner(run, init_kwargs)
        self.module_name, self.labels_arg = module, labels_arg
        self.pooling = pooling
        self.evaluate = evaluate
        self.evaluation = Collected()
        self._handles: list[Any] = []
        self._labels: Any = None
        self._step = 0

    @property
    def run(self) -> Run:
        return self.owner.ensure()

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: torch.nn.Module | None = None,
        **kwargs: Any,
    ) -> None:
        if model is None:
            raise ValueError("SphereScopeCallback needs the model (the Trainer passes it)")
        self.owner.ensure(launcher=_launcher(args))
        self._remove_hooks()
        target = model.get_submodule(self.module_name)
        self._handles = [
            model.register_forward_pre_hook(self._capture_labels, with_kwargs=True),
            target.register_forward_hook(self._capture_embeddings(model)),
        ]

    def on_step_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._step = state.global_step + 1

    def on_evaluate(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        collected = self.evaluation.take()
        if collected is None or not self.evaluate:
            return
        size, block = None, 1
        if args.world_size > 1:  # collective: every rank's shard, dealt a batch at a time
            size = _dataset_size(kwargs.get("eval_dataloader"))
            split = getattr(args.accelerator_config, "split_batches", False)
            block = (
                args.eval_batch_size // args.world_size
                if split
                else args.per_device_eval_batch_size
            )
        self.run.evaluate(*collected, step=state.global_step, dataset_size=size, shard_block=block)

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._remove_hooks()
        self.owner.end()

    # -- hooks -----------------------------------------------------------------------------
    def _capture_labels(self, module: torch.nn.Module, args: Any, kwargs: dict) -> None:
        self._labels = kwargs.get(self.labels_arg)

    def _capture_embeddings(self, model: torch.nn.Module) -> Callable[..., None]:
        def hook(module: torch.nn.Module, inputs: Any, output: Any) -> None:
            if self._labels is None:
                return
            embeddings = pooled(output, self.pooling)
            if model.training:
                self.run.log_embeddings(embeddings, self._labels, step=self._step)
            elif self.evaluate:
                self.evaluation.add(embeddings, self._labels)

        return hook

    def _remove_hooks(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []


def _launcher(args: TrainingArguments) -> str:
    """How the Trainer's job runs, as recorded with the run."""
    if args.world_size <= 1:
        return "hf trainer"
    if any(name.startswith("ACCELERATE_") for name in os.environ):
        return "hf trainer (accelerate launch)"
    if "TORCHELASTIC_RUN_ID" in os.environ:
        return "hf trainer (torchrun)"
    return f"hf trainer ({args.parallel_mode.value})"


def _dataset_size(loader: Any) -> int | None:
    try:
        return len(loader.dataset)
    except (AttributeError, TypeError):  # none given, or an iterable data set
        return None
