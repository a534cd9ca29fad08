"""Cost of SphereScope's per-iteration diagnostics over a bare training loop.

The same model, data and seed are trained with a bare loop (data, forward, backward,
step) and with ``run_training`` logging every diagnostic every step into the in-memory
tracker, in alternating rounds in one process, with the same torch threads. Both sides
are timed per step the same way: the bare loop between two ends of its optimiser step,
the full loop between two ``track_progress`` calls (the end of each step), so set-up and
the final evaluation are excluded from both. The ratio is of the medians of all those
per-step times: a step the scheduler pre-empts (a busy shared machine) does not move a
median, while it would move a mean or a total.

Targets: ratio ≤ 1.05 for LeNet++ at batch 256 on 28×28 inputs and ≤ 1.25 for
the digits MLP.

    .venv/bin/python bench/diagnostics_overhead.py [--data-root ../shared/data] [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from pathlib import Path

import torch

from sphere_engine.config import RunConfig
from sphere_engine.data import create_dataset, iter_batches
from sphere_engine.models import create_model
from sphere_engine.objective import build_objective
from sphere_engine.optim import build_optimizer
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training
from sphere_engine.validation import validate


def bare_step_times(config: RunConfig, steps: int) -> list[float]:
    """Seconds of each step of data, forward/backward and optimiser step only (the first
    step, with its one-off costs, excluded)."""
    torch.manual_seed(config.training.seed)
    data = config.data
    splits = create_dataset(
        data.name, root=data.root, split=data.split, seed=config.training.seed, **data.options
    )
    model = create_model(
        config.model.name, splits.input_shape, config.model.embedding_dim, **config.model.options
    )
    objective = build_objective(config, splits.num_classes_train)
    optimizer = build_optimizer(config.optimizer, model, objective.parameters())
    batches = iter_batches(
        splits.train,
        data.batch_size,
        data.samples_per_class,
        seed=config.training.seed,
        device="cpu",
    )
    model.train()
    ends = []
    for _ in range(steps):
        inputs, labels, _ = next(batches)
        loss = objective(model(inputs), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        ends.append(time.perf_counter())
    return [later - earlier for earlier, later in itertools.pairwise(ends[1:])]


class _StepClock(InMemoryTracker):
    """Stamps the end of every training step (``track_progress`` closes each one)."""

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[float] = []

    def track_progress(self, step: int, total: int) -> None:
        self.ends.append(time.perf_counter())


def full_step_times(config: RunConfig) -> list[float]:
    clock = _StepClock()
    run_training(config, clock)
    logged = {step for step, name, _, _ in clock.scalars if name == "loss/total"}
    assert len(logged) == config.training.steps, "every step must log its diagnostics"
    ends = clock.ends
    return [later - earlier for earlier, later in itertools.pairwise(ends[1:])]


def measure(label: str, config: RunConfig, rounds: int, target: float) -> float:
    steps = config.training.steps
    bare: list[float] = []
    full: list[float] = []
    for _ in range(rounds):  # interleaved, so drifts in machine load hit both sides
        bare += bare_step_times(config, steps)
        full += full_step_times(config)
    ratio = statistics.median(full) / statistics.median(bare)
    verdict = "OK" if ratio <= target else "ABOVE TARGET"
    print(
        f"{label:<34} bare {1e3 * statistics.median(bare):8.2f} ms/step   "
        f"full {1e3 * statistics.median(full):8.2f} ms/step   ratio {ratio:.3f} "
        f"(target ≤ {target}) {verdict}"
    )
    # the statistics are finished K steps at once: the few steps that carry a batch's
    # finish are outliers a median ignores, so the ratio of means is printed beside it
    mean_ratio = statistics.fmean(full) / statistics.fmean(bare)
    print(f"{'':<34} ratio of means {mean_ratio:.3f} (batched finishes included)")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-root", default=str(Path(__file__).parents[1].parent / "shared" / "data")
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch intra-op threads (default: torch's choice). On a busy machine 1 avoids "
        "OpenMP stalls that swamp both sides",
    )
    parser.add_argument("--only", choices=["digits", "lenet"], default=None)
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    diagnostics = {
        "log_every": 1,
        "eval_every": 10**6,
        "tracked_samples": 16,
        "eval_max_samples": 500,
        "snapshot_size": 0,
    }
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")

    digits = RunConfig.from_dict(
        {
            "data": {"name": "digits", "batch_size": 40, "samples_per_class": 8},
            "model": {"name": "mlp", "embedding_dim": 64},
            "objective": {"kind": "loss", "name": "triplet"},
            "regularizer": {"name": "sec", "weight": 0.5},
            "training": {"steps": args.steps * 5},
            "diagnostics": diagnostics,
        }
    )
    validate(digits)
    if args.only in (None, "digits"):
        measure("digits MLP, batch 40", digits, args.rounds, 1.25)
    if args.only == "digits":
        return

    mnist_root = Path(args.data_root)
    if not (mnist_root / "MNIST" / "raw" / "train-images-idx3-ubyte").is_file():
        raise SystemExit(
            f"MNIST not found under {mnist_root} (expected MNIST/raw/...); pass --data-root"
        )
    data = {"name": "mnist", "root": str(mnist_root), "split": "standard"}
    lenet = RunConfig.from_dict(
        {
            "data": {**data, "batch_size": 256, "samples_per_class": 0},
            "model": {"name": "lenetpp", "embedding_dim": 9},
            "objective": {"kind": "head", "name": "simplex", "options": {"margin": "auto"}},
            "optimizer": {"name": "adam", "lr": 5e-4},
            "training": {"steps": args.steps},
            "diagnostics": diagnostics,
        }
    )
    validate(lenet)
    measure("LeNet++ batch 256 on 28×28", lenet, args.rounds, 1.05)


if __name__ == "__main__":
    main()
