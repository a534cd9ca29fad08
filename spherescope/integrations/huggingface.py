"""Hugging Face ``transformers`` Trainer (and sentence-transformers' trainer built on it).

``SphereScopeCallback(module="bert.pooler")`` hooks that submodule's forward output
(pooled to N × d: first token by default, or ``pooling="mean"`` / a callable) and the
model's ``labels`` argument. Training steps get the per-step diagnostics, with the
gradient statistics; each ``evaluate`` gets the evaluation metrics and a snapshot.

    trainer = Trainer(model, args, ..., callbacks=[SphereScopeCallback(module="bert.pooler")])
"""

from __future__ import annotations

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
        self.owner.ensure()
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
        if collected is not None and self.evaluate:
            self.run.evaluate(*collected, step=state.global_step)

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
