"""Cost of SphereScope's per-iteration diagnostics over a bare training loop.

The same model, data and seed are trained with a bare loop (forward, backward, step)
and with ``run_training`` logging every diagnostic every step into the in-memory
tracker, in alternating rounds in one process. Per-step time of the full loop comes
from the tracker's wall-clock stamps between its first and last logged step, so set-up
and the final evaluation are excluded from both sides.

Targets (issue 2): ratio ≤ 1.05 for LeNet++ at batch 256 on 28×28 inputs and ≤ 1.25 for
the digits MLP.

    .venv/bin/python bench/diagnostics_overhead.py [--data-root ../shared/data] [--rounds 5]
"""

from __future__ import annotations

import argparse
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


def bare_step_time(config: RunConfig, steps: int) -> float:
    """Seconds per step of forward/backward/step only (one warm-up step excluded)."""
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
    started = 0.0
    for step in range(steps):
        if step == 1:
            started = time.perf_counter()
        inputs, labels, _ = next(batches)
        loss = objective(model(inputs), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - started) / (steps - 1)


def full_step_time(config: RunConfig) -> float:
    tracker = InMemoryTracker()
    run_training(config, tracker)
    stamps = sorted(
        {(step, wall) for step, name, _, wall in tracker.scalars if name == "loss/total"}
    )
    (first_step, first_wall), (last_step, last_wall) = stamps[0], stamps[-1]
    return (last_wall - first_wall) / (last_step - first_step)


def measure(label: str, config: RunConfig, rounds: int, target: float) -> float:
    steps = config.training.steps
    bare, full = [], []
    for _ in range(rounds):  # interleaved, so drifts in machine load hit both sides
        bare.append(bare_step_time(config, steps))
        full.append(full_step_time(config))
    ratio = statistics.median(full) / statistics.median(bare)
    verdict = "OK" if ratio <= target else "ABOVE TARGET"
    print(
        f"{label:<34} bare {1e3 * statistics.median(bare):8.2f} ms/step   "
        f"full {1e3 * statistics.median(full):8.2f} ms/step   ratio {ratio:.3f} "
        f"(target ≤ {target}) {verdict}"
    )
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
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
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
    measure("digits MLP, batch 40", digits, args.rounds, 1.25)

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
