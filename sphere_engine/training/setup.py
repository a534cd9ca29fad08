"""Everything a run needs before its first step: data, model, objective, optimiser,
learning-rate schedule, the tracked samples and the evaluator.

``prepare_training`` is the one place these are built; the loop (``sphere_engine.train``)
only uses them. Wrapping the model (distributed data parallel) belongs here, after the
model is on its device and before the optimiser takes its parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from sphere_engine.config import RunConfig
from sphere_engine.config.folds import class_ranges
from sphere_engine.data.batches import gather_inputs
from sphere_engine.diagnostics.cuda_graph import GraphedPass
from sphere_engine.diagnostics.direction_tracker import DirectionTracker
from sphere_engine.diagnostics.tracked_samples import choose_tracked_samples, tracked_embedder
from sphere_engine.evaluation import Evaluator
from sphere_engine.objective import Objective, build_objective
from sphere_engine.optim import build_optimizer, lr_multiplier
from sphere_engine.parallel import SINGLE_PROCESS, DataParallel
from sphere_engine.training.device import resolve_device, seed_everything
from sphere_engine.training.early_stopping import ValidationWatch
from sphere_engine.training.measurement import batch_groups
from sphere_engine.training.precision import Precision, build_precision


@dataclass
class TrackedSamples:
    """The fixed training samples whose norms and directions the run follows (on the
    logged steps that ``diagnostics.tracked_every`` picks)."""

    ids: np.ndarray
    inputs: torch.Tensor  # on the run's device
    embed: Callable[[torch.Tensor], torch.Tensor]  # a no-grad pass of their own
    directions: DirectionTracker

    @property
    def id_list(self) -> list[int]:
        return [int(i) for i in self.ids]


@dataclass
class TrainingSetup:
    """A run's built parts. ``model`` is the module checkpoints and evaluation read;
    ``trained`` the one the step calls (``model`` under DistributedDataParallel in a
    data-parallel job, whose ``parallel`` says which process this is)."""

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
    # a logged step's batch statistics (``measurement.batch_groups``; a GraphedPass
    # on a GPU): the step calls it, in one process
    batch_pass: Callable[..., tuple[torch.Tensor, list[Any]]]
    precision: Precision  # training.amp: autocast and gradient scaling of the step
    trained: torch.nn.Module  # the model as the step calls it (under DDP in a data-parallel job)
    channels_last: bool = False  # image batches are converted before the forward
    pretrained: dict[str, str] | None = None  # the weights file and its SHA-256
    parallel: DataParallel = SINGLE_PROCESS
    checkpoint_dir: str = ""  # "" when the run writes no checkpoints
    # early stopping and the best validation weights (``early_stopping.py``)
    watch: ValidationWatch = field(default_factory=lambda: ValidationWatch("map@r", 0))

    def run_info(self) -> dict[str, Any]:
        """What the run reports once, before its first step."""
        return {
            "device": str(self.device),
            "torch_threads": torch.get_num_threads(),
            "parameters": sum(p.numel() for p in self.model.parameters()),
            "train_samples": len(self.splits.train.labels),
            "test_samples": len(self.splits.test.labels),
            **(
                {"validation_samples": len(self.splits.validation.labels)}
                if self.splits.validation is not None
                else {}
            ),
            "num_classes_train": self.splits.num_classes_train,
            "num_classes_test": self.splits.num_classes_test,
            "tracked_samples": self.tracked.id_list,
            **recorded_classes(self.splits),
            **({"pretrained": self.pretrained} if self.pretrained else {}),
            # the names of the classes the snapshots show (validation classes with folds)
            **_class_names(self.splits.evaluated),
        }


def recorded_classes(splits: Any) -> dict[str, Any]:
    """Which classes the run trains on, evaluates on during training and tests on
    (original ids as ``class_ranges``): what a study asserts no trial saw."""
    validation = splits.validation
    return {
        "data_classes": {
            "train": class_ranges(splits.train.classes),
            "validation": class_ranges([] if validation is None else validation.classes),
            "test": class_ranges(splits.test.classes),
        },
        "evaluated_on": "test" if validation is None else "validation",
    }


#: Class names are recorded for test splits of at most this many classes.
MAX_RECORDED_CLASS_NAMES = 1000


def _class_names(test: Any) -> dict[str, list[str]]:
    names = getattr(test, "class_names", None)
    if not names or len(names) > MAX_RECORDED_CLASS_NAMES:
        return {}
    # the ids snapshots carry (``evaluator.original_classes``), so a page can name them
    classes = getattr(test, "classes", None)
    ids = {} if classes is None else {"class_ids_test": [int(c) for c in classes]}
    return {"class_names_test": list(names), **ids}


def prepare_training(
    config: RunConfig,
    parallel: DataParallel = SINGLE_PROCESS,
    checkpoint_dir: str | None = None,
) -> TrainingSetup:
    """Seed, then build the data, model, objective, optimiser and trackers of ``config``
    (``parallel``: this process's slice of each batch, the model under DDP).

    ``checkpoint_dir``: where checkpoints go when ``training.checkpoint_dir`` is empty
    (a recorded run's own directory); the config itself is never changed."""
    from sphere_engine.data import create_dataset, iter_batches
    from sphere_engine.data.folds import fold_splits
    from sphere_engine.data.loader_workers import resolve_num_workers
    from sphere_engine.models.build import build_backbone
    from sphere_engine.validation.image_size import resolved_data_options

    training, data = config.training, config.data
    device = resolve_device(training.device)
    seed_everything(training.seed)
    dataset = create_dataset(
        data.name,
        root=data.root,
        split=data.split,
        download=data.download,
        seed=training.seed,
        **resolved_data_options(config),
    )
    splits = fold_splits(dataset, data.folds, data.fold)  # the test split is kept apart
    precision = build_precision(training.amp, device)
    model, weights = build_backbone(config.model, splits.input_shape)
    channels_last = training.channels_last and len(splits.input_shape) == 3
    model = model.to(device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    if training.compile:
        model.compile()  # in place: the state dict keeps its keys for checkpoints
    trained = parallel.wrap(model, device)
    objective = build_objective(config, splits.num_classes_train).to(device)
    optimizer = build_optimizer(config.optimizer, model, objective.parameters())
    batches = iter_batches(
        splits.train,
        data.batch_size,
        data.samples_per_class,
        seed=training.seed,
        num_workers=resolve_num_workers(data.num_workers, splits.train),
        device=device,
        shard=parallel.shard if parallel.is_distributed else None,
    )
    tracked_ids = choose_tracked_samples(
        splits.train.labels, config.diagnostics.tracked_samples, training.seed
    )
    tracked_inputs = gather_inputs(splits.train, tracked_ids).to(device)
    if channels_last and tracked_inputs.dim() == 4:
        tracked_inputs = tracked_inputs.contiguous(memory_format=torch.channels_last)
    graphs = device.type == "cuda" and config.diagnostics.cuda_graphs
    tracked = TrackedSamples(
        ids=tracked_ids,
        inputs=tracked_inputs,
        # a compiled model is left to torch.compile's own graphs
        embed=tracked_embedder(model, precision.autocast, graphed=graphs and not training.compile),
        directions=DirectionTracker(),
    )
    batch_pass = batch_groups
    if graphs and not parallel.is_distributed:  # a job's statistics gather (collectives)
        batch_pass = GraphedPass(batch_groups, name="the batch's statistics")
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
        batch_pass=batch_pass,
        evaluator=Evaluator(splits, config, device),
        precision=precision,
        channels_last=channels_last,
        pretrained=weights.as_info() if weights else None,
        trained=trained,
        parallel=parallel,
        checkpoint_dir=training.checkpoint_dir or checkpoint_dir or "",
        watch=validation_watch(config, splits, parallel),
    )


def validation_watch(config: RunConfig, splits: Any, parallel: DataParallel) -> ValidationWatch:
    """Early stopping on the periodic evaluation; with folds and a final test, the best
    validation evaluation's weights are kept for it (without folds the periodic
    evaluation is the test split: choosing weights by it would be choosing on test).
    Rank 0 alone evaluates, so only it keeps weights."""
    keep_best = config.evaluation.final_test and splits.validation is not None
    return ValidationWatch(
        config.training.early_stop_metric,
        config.training.early_stop_patience,
        keep_best=keep_best and parallel.is_main,
    )
