"""Cost of the spherescope SDK over the user's bare training step.

The user's step is forward, loss, backward, optimiser step; for the digits MLP it is the
same workload as bench/diagnostics_overhead.py (P×K batches of 40, triplet loss + SEC),
for ResNet-18 a cosine-softmax loss on random 32×32 inputs. The SDK step adds
``run.log_embeddings`` (every step: ``log_every=1``, with the gradient statistics from
the tensor hook) and ``run.log({"loss/total": loss.item()})``, writing to a real store
in a temporary folder.

Measured in alternating blocks of whole runs on the same model in one process: a bare
block is ``steps`` plain steps; an SDK block is ``spherescope.init`` → the same steps →
``finish``. So the writer thread's background work (finishing statistics, Parquet
writes, compaction) lands in the SDK's blocks only, never in the bare steps. Two ratios
of the medians over blocks: per-step time of the steps alone, and of the whole run
(init and finish included), both against the bare block's per-step time.

Targets: ≤ 1.25× for the digits MLP at batch
40, ≤ 1.05× for ResNet-18 at batch 64 on 32×32 inputs, on CPU.

    .venv/bin/python bench/sdk_overhead.py [--rounds 8] [--steps 200] [--only digits|resnet]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

import spherescope
from sphere_engine.config import RunConfig
from sphere_engine.data import create_dataset, iter_batches
from sphere_engine.models import create_model
from sphere_engine.objective import build_objective


def _cosine_softmax(
    num_classes: int, dim: int
) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    weights = torch.nn.Parameter(torch.randn(num_classes, dim))

    def loss(embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = 16.0 * F.normalize(embeddings, dim=1) @ F.normalize(weights, dim=1).T
        return F.cross_entropy(logits, labels)

    loss.parameters = [weights]  # type: ignore[attr-defined]
    return loss


Batches = Callable[[], tuple[torch.Tensor, torch.Tensor]]


def run_block(with_sdk: bool, label: str, model: torch.nn.Module, next_batch: Batches,
              loss_fn: Any, optimizer: torch.optim.Optimizer, steps: int,
              home: str) -> tuple[float, float]:  # fmt: skip
    """One whole run: (seconds per step of the steps alone, of init → steps → finish)."""
    started = time.perf_counter()
    run = spherescope.init(name=label, home=home) if with_sdk else None
    steps_started = time.perf_counter()
    for step in range(1, steps + 1):
        inputs, labels = next_batch()
        embeddings = model(inputs)
        if run is not None:
            run.log_embeddings(embeddings, labels, step=step)
        loss = loss_fn(embeddings, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if run is not None:
            run.log({"loss/total": loss.item()}, step=step)
    steps_done = time.perf_counter()
    if run is not None:
        run.finish()
    ended = time.perf_counter()
    return (steps_done - steps_started) / steps, (ended - started) / steps


def measure(label: str, model: torch.nn.Module, next_batch: Batches, loss_fn: Any,
            parameters: list[torch.nn.Parameter], rounds: int, steps: int,
            target: float) -> float:  # fmt: skip
    optimizer = torch.optim.SGD([*model.parameters(), *parameters], lr=0.01)
    model.train()
    bare_times: list[float] = []
    sdk_steps: list[float] = []
    sdk_runs: list[float] = []
    with tempfile.TemporaryDirectory() as home:
        args = (label, model, next_batch, loss_fn, optimizer)
        run_block(True, *args, max(steps // 10, 5), home)  # warm-up: first-call costs
        run_block(False, *args, max(steps // 10, 5), home)
        for _ in range(rounds):  # alternating whole runs, so load drifts hit both sides
            bare_times.append(run_block(False, *args, steps, home)[0])
            alone, whole = run_block(True, *args, steps, home)
            sdk_steps.append(alone)
            sdk_runs.append(whole)
    bare = statistics.median(bare_times)
    ratio = statistics.median(sdk_steps) / bare
    whole_ratio = statistics.median(sdk_runs) / bare
    verdict = "OK" if whole_ratio <= target else "ABOVE TARGET"
    print(
        f"{label:<30} bare {1e3 * bare:7.2f} ms/step   sdk steps {ratio:.3f}×   "
        f"sdk init→finish {whole_ratio:.3f}× (target ≤ {target}) {verdict}"
    )
    per_block = " ".join(f"{s / b:.2f}" for s, b in zip(sdk_runs, bare_times, strict=True))
    print(f"{'':<30} {rounds} blocks of {steps} steps; per-block ratios {per_block}")
    return whole_ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200, help="steps per block (digits)")
    parser.add_argument("--only", choices=["digits", "resnet"], default=None)
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    torch.manual_seed(0)
    if args.only in (None, "digits"):
        config = RunConfig.from_dict(
            {
                "data": {"name": "digits", "batch_size": 40, "samples_per_class": 8},
                "model": {"name": "mlp", "embedding_dim": 64},
                "objective": {"kind": "loss", "name": "triplet"},
                "regularizer": {"name": "sec", "weight": 0.5},
            }
        )
        splits = create_dataset("digits", seed=0)
        batches = iter_batches(splits.train, 40, 8, seed=0, device="cpu")

        def digits_batch() -> tuple[torch.Tensor, torch.Tensor]:
            inputs, labels, _ = next(batches)
            return inputs, labels

        model = create_model("mlp", splits.input_shape, 64)
        objective = build_objective(config, splits.num_classes_train)
        measure("digits MLP, batch 40", model, digits_batch, objective,
                list(objective.parameters()), args.rounds, args.steps, 1.25)  # fmt: skip
    if args.only in (None, "resnet"):
        model = create_model("resnet18", (3, 32, 32), 128)
        inputs, labels = torch.randn(64, 3, 32, 32), torch.arange(64) % 10
        loss_fn = _cosine_softmax(10, 128)
        measure("ResNet-18 batch 64 on 32×32", model, lambda: (inputs, labels), loss_fn,
                loss_fn.parameters, args.rounds, max(args.steps // 20, 5), 1.05)  # fmt: skip


if __name__ == "__main__":
    main()
