"""The training loop: ``run_training(config, tracker, should_stop) -> TrainingResult``.

It reads top to bottom: set-up, then one loop whose phases are commented (stop?,
lr, data, forward, backward, diagnostics, step, evaluation, checkpoint). It knows
nothing of Celery, DuckDB or Streamlit: everything it measures goes to ``tracker``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sphere_engine.config import RunConfig
from sphere_engine.diagnostics.batch_statistics import (
    DirectionTracker,
    StepStatistics,
    batch_statistics,
)
from sphere_engine.diagnostics.pending_statistics import PendingStatistics
from sphere_engine.diagnostics.tracked_samples import choose_tracked_samples, tracked_embedder
from sphere_engine.errors import TrainingDivergedError
from sphere_engine.evaluation import Evaluator, gather_inputs
from sphere_engine.objective import build_objective
from sphere_engine.optim import apply_lr, build_optimizer, lr_multiplier
from sphere_engine.tracking import Tracker


@dataclass
class TrainingResult:
    steps_completed: int
    cancelled: bool
    final_metrics: dict[str, float] = field(default_factory=dict)
    checkpoint_path: str | None = None
    device: str = "cpu"


def resolve_device(name: str) -> torch.device:
    """``auto`` → CUDA when present, else CPU; ``cuda`` without a GPU is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("training.device: 'cuda' was asked for but no CUDA device is available")
    return torch.device(name)


def seed_everything(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)


def save_checkpoint(
    directory: str,
    step: int,
    config: RunConfig,
    model: torch.nn.Module,
    objective: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
) -> str:
    """Write state dicts (and the config as plain JSON types) to ``step_<n>.pt``."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    target = path / f"step_{step:08d}.pt"
    temporary = target.with_suffix(".pt.tmp")
    torch.save(
        {
            "step": step,
            "config": config.to_dict(),
            "model": model.state_dict(),
            "objective": objective.state_dict(),
            "optimizer": optimizer.state_dict(),
        },
        temporary,
    )
    temporary.replace(target)  # atomic: a reader never sees half a checkpoint
    return str(target)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load a checkpoint written by ``save_checkpoint`` (tensors and plain types only)."""
    return torch.load(path, map_location="cpu", weights_only=True)


def _divergence_message(
    step: int, loss: float, last_finite: dict[str, float], last_finite_step: int | None
) -> str:
    shown = ("loss/total", "norm/mean", "norm/max", "grad/norm_mean", "lr")
    if last_finite_step is None:
        context = "no finite values were logged before it"
    else:
        values = ", ".join(f"{k}={last_finite[k]:.4g}" for k in shown if k in last_finite)
        context = f"last finite values (step {last_finite_step}): {values}"
    return (
        f"training diverged: the loss became {loss} at step {step}; {context}. "
        "Lower optimizer.lr, add warm-up, or check the loss options."
    )


def run_training(
    config: RunConfig, tracker: Tracker, should_stop: Callable[[], bool] | None = None
) -> TrainingResult:
    """Train ``config`` and report every statistic through ``tracker``."""
    from sphere_engine.data import create_dataset, iter_batches
    from sphere_engine.models import create_model

    training, diagnostics = config.training, config.diagnostics
    device = resolve_device(training.device)
    seed_everything(training.seed)

    # ---- set-up: data, model, objective (loss or head + regulariser), optimiser
    data = config.data
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
    lr_at = lr_multiplier(config.schedule, training.steps)
    batches = iter_batches(
        splits.train,
        data.batch_size,
        data.samples_per_class,
        seed=training.seed,
        num_workers=data.num_workers,
        device=device,
    )
    tracked_ids = choose_tracked_samples(
        splits.train.labels, diagnostics.tracked_samples, training.seed
    )
    tracked_list = tracked_ids.tolist()
    tracked_inputs = gather_inputs(splits.train, tracked_ids).to(device)
    directions = DirectionTracker()
    embed_tracked = tracked_embedder(model)
    evaluator = Evaluator(splits, config, device)
    needs_views = getattr(objective, "requires_views", False)

    tracker.track_run_info(
        {
            "device": str(device),
            "torch_threads": torch.get_num_threads(),
            "parameters": sum(p.numel() for p in model.parameters()),
            "train_samples": len(splits.train.labels),
            "test_samples": len(splits.test.labels),
            "num_classes_train": splits.num_classes_train,
            "num_classes_test": splits.num_classes_test,
            "tracked_samples": [int(i) for i in tracked_ids],
        }
    )

    step, cancelled, checkpoint_path = 0, False, None
    # logged steps wait here for their host finish, done K steps at once (the finished
    # values only reach the store at the tracker's flush anyway)
    pending = PendingStatistics()

    def report_pending() -> None:
        for record in pending.finish():
            tracker.track_many(record.values, record.step, record.wall_time)
            if record.sample_ids:
                tracker.track_sample_norms(record.sample_ids, record.sample_norms, record.step)

    final_metrics: dict[str, float] = {}
    model.train()
    try:
        while step < training.steps:
            # ---- cooperative cancel: checked every iteration
            if should_stop is not None and should_stop():
                cancelled = True
                break
            step += 1
            started = time.perf_counter()

            # ---- learning rate for this step
            lr = apply_lr(optimizer, lr_at(step))

            # ---- data (NT-Xent: two augmented views, labels = instance ids)
            inputs, labels, _ = next(batches)
            if needs_views:
                instance = torch.arange(len(labels), device=device)
                inputs = torch.cat([splits.augment(inputs), splits.augment(inputs)])
                labels = torch.cat([instance, instance])

            # ---- forward
            embeddings = model(inputs)
            logged = step % diagnostics.log_every == 0 or step == training.steps
            if logged and diagnostics.gradient_stats:
                embeddings.retain_grad()
            loss = objective(embeddings, labels)

            # ---- backward
            optimizer.zero_grad(set_to_none=True)
            loss.backward()

            # ---- diagnostics (no autograd; one host transfer for all of them)
            if logged:
                stats = StepStatistics()
                stats.add(  # the named 0-dim tensors: one group, one stack
                    {
                        "loss/total": loss,
                        **{f"loss/{k}": v for k, v in objective.last_terms.items()},
                        **objective.regularizer_diagnostics(),
                        **objective.mining_diagnostics(),
                    }
                )
                stats.add(
                    batch_statistics(
                        embeddings, labels, embeddings.grad if diagnostics.gradient_stats else None
                    )
                )
                if len(tracked_ids):
                    stats.add(directions.update(embed_tracked(tracked_inputs)))
                    stats.sample_norms = directions.norms
                host = stats.transfer()  # the step's one sync point; finished later
                loss_value = host.raw_value("loss/total")
            else:
                loss_value = float(loss.detach())  # still one sync: divergence must be caught

            if not math.isfinite(loss_value):
                report_pending()  # every step before this one had a finite loss
                # the non-finite loss is logged at its step: the run's findings show where
                tracker.track(loss_value, "loss/total", step)
                last = pending.last
                raise TrainingDivergedError(
                    _divergence_message(
                        step, loss_value, last.values if last else {}, last and last.step
                    )
                )

            # ---- optimiser step
            optimizer.step()

            # ---- report
            if logged:
                elapsed = time.perf_counter() - started
                timing = {
                    "lr": lr,
                    "time/step": elapsed,
                    "time/samples_per_s": len(labels) / max(elapsed, 1e-9),
                }
                pending.add(step, host, timing, tracked_list)
            # K steps waiting, the oldest waited ~0.5 s, or the last step: reported before
            # its progress, so the final progress line shows the final values
            if pending.due() or step == training.steps:
                report_pending()
            tracker.track_progress(step, training.steps)

            # ---- periodic evaluation on the test split (and at the end)
            if step % diagnostics.eval_every == 0 or step == training.steps:
                report_pending()
                final_metrics = evaluator.evaluate(
                    model, objective, tracker, step, final=step == training.steps
                )
                model.train()

            # ---- periodic checkpoint
            if (
                training.checkpoint_dir
                and training.checkpoint_every
                and step % training.checkpoint_every == 0
            ):
                report_pending()
                checkpoint_path = save_checkpoint(
                    training.checkpoint_dir, step, config, model, objective, optimizer
                )
                tracker.track_checkpoint(checkpoint_path, step)

        # ---- end (finished or cancelled): final evaluation if it was not just done
        if cancelled and step and step % diagnostics.eval_every:
            final_metrics = evaluator.evaluate(model, objective, tracker, step, final=True)
        if (
            training.checkpoint_dir
            and step
            and not checkpoint_path_is_current(checkpoint_path, step)
        ):
            checkpoint_path = save_checkpoint(
                training.checkpoint_dir, step, config, model, objective, optimizer
            )
            tracker.track_checkpoint(checkpoint_path, step)
    finally:
        try:
            report_pending()  # finished, cancelled or failed: nothing logged is lost
        finally:
            tracker.flush()
    return TrainingResult(step, cancelled, final_metrics, checkpoint_path, str(device))


def checkpoint_path_is_current(path: str | None, step: int) -> bool:
    """Whether the last checkpoint written is the one of ``step`` (no need to re-save)."""
    return path is not None and Path(path).name == f"step_{step:08d}.pt"
