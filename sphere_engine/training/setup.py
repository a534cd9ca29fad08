"""Everything a run needs before its first step: data, model, objective, optimiser,
learning-rate schedule, the tracked samples and the evaluator.

``prepare_training`` is the one place these are built; the loop (``sphere_engine.train``)
only uses them. Wrapping the model (distributed data parallel) belongs here, after the
model is on its device and before the optimiser takes its parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from sphere_engine.config import RunConfig
from sphere_engine.diagnostics.batch_statistics import DirectionTracker
from sphere_engine.diagnostics.tracked_samples import choose_tracked_samples, tracked_embedder
from sphere_engine.evaluation import Evaluator, gather_inputs
from sphere_engine.objective import Objective, build_objective
from sphere_engine.optim import build_optimizer, lr_multiplier
from sphere_engine.training.device import resolve_device, seed_everything


@dataclass
class TrackedSamples:
    """The fixed training samples whose norms and directions every logged step follows."""

    ids: np.ndarray
    inputs: torch.Tensor  # on the run's device
    embed: Callable[[torch.Tensor], torch.Tensor]  # a no-grad pass of their own
    directions: DirectionTracker

    @property
    def id_list(self) -> list[int]:
        return [int(i) for i in self.ids]


@dataclass
class TrainingSetup:
    """A run's built parts. ``model`` is the module the step calls (a wrapper, when one
    is added, goes here); checkpoints and evaluation read its weights."""

    config: RunConfig
    device: torch.device
    splits: Any  # DatasetSplits
    model: torch.nn.Module
    objective: Objective
    optimizer: torch.optim.Optimizer
    lr_at: Callable[[int], float]  # the schedule's multiplier of optimizer.lr at a step
    batches: Iterator[tuple[torch.Tensor, torch.Tensor, Any]]
    tracked: TrackedSamples
    evaluator: Evaluator

    def run_info(self) -> dict[str, Any]:
        """What the run reports once, before its first step."""
        return {
            "device": str(self.device),
            "torch_threads": torch.get_num_threads(),
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "train_samples": len(self.splits.train.labels),
            "test_samples": len(self.splits.test.labels),
            "num_classes_train": self.splits.num_classes_train,
            "num_classes_test": self.splits.num_classes_test,
            "tracked_samples": self.tracked.id_list,
        }


def prepare_training(config: RunConfig) -> TrainingSetup:
    """Seed, then build the data, model, objective, optimiser and trackers of ``config``."""
    from sphere_engine.data import create_dataset, iter_batches
    from sphere_engine.models import create_model

    training, data = config.training, config.data
    device = resolve_device(training.device)
    seed_everything(training.seed)
    splits = create_dataset(
        data.name,
        root=data.root,
        split=data.split,
        download=data.download,
        seed=training.seed,
        **data.options,
    )
    model = create_model(
        config.model.name,
        splits.input_shape,
        config.model.embedding_dim,
        embedding_bn=config.model.embedding_bn,
        weight_norm=config.model.weight_norm,
        **config.model.options,
    ).to(device)
    objective = build_objective(config, splits.num_classes_train).to(device)
    optimizer = build_optimizer(config.optimizer, model, objective.parameters())
    batches = iter_batches(
        splits.train,
        data.batch_size,
        data.samples_per_class,
        seed=training.seed,
        num_workers=data.num_workers,
        device=device,
    )
    tracked_ids = choose_tracked_samples(
        splits.train.labels, config.diagnostics.tracked_samples, training.seed
    )
    tracked = TrackedSamples(
        ids=tracked_ids,
        inputs=gather_inputs(splits.train, tracked_ids).to(device),
        embed=tracked_embedder(model),
        directions=DirectionTracker(),
    )
    return TrainingSetup(
        config=config,
        device=device,
        splits=splits,
        model=model,
        objective=objective,
        optimizer=optimizer,
        lr_at=lr_multiplier(config.schedule, training.steps),
        batches=batches,
        tracked=tracked,
        evaluator=Evaluator(splits, config, device),
    )
