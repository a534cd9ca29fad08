"""Cost of the spherescope SDK over the user's bare training step.

The user's step is forward, loss, backward, optimiser step; for the digits MLP it is the
same workload as bench/diagnostics_overhead.py (P×K batches of 40, triplet loss + SEC),
for ResNet-18 a cosine-softmax loss on random 32×32 inputs. The SDK step adds
``run.log_embeddings`` (every step: ``log_every=1``, with the gradient statistics from
the tensor hook) and ``run.log({"loss/total": loss.item()})``, writing to a real store
in a temporary folder. Bare and SDK steps alternate one by one on the same model in one
process (so drifts in machine load hit both sides); the ratio is of the medians of
per-step times.

Targets (issue 10): ≤ 1.25× for the digits MLP at batch 40, ≤ 1.05× for ResNet-18 at
batch 64 on 32×32 inputs, on CPU.

    .venv/bin/python bench/sdk_overhead.py [--rounds 6] [--steps 10] [--only digits|resnet]
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


def measure(label: str, model: torch.nn.Module, next_batch: Batches, loss_fn: Any,
            parameters: list[torch.nn.Parameter], rounds: int, steps: int,
            target: float) -> float:  # fmt: skip
    optimizer = torch.optim.SGD([*model.parameters(), *parameters], lr=0.01)
    model.train()
    bare_times: list[float] = []
    sdk_times: list[float] = []
    step = 0
    with tempfile.TemporaryDirectory() as home, spherescope.init(name=label, home=home) as run:

        def one_step(with_sdk: bool) -> float:
            nonlocal step
            step += 1
            inputs, labels = next_batch()
            started = time.perf_counter()
            embeddings = model(inputs)
            if with_sdk:
                run.log_embeddings(embeddings, labels, step=step)
            loss = loss_fn(embeddings, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if with_sdk:
                run.log({"loss/total": loss.item()}, step=step)
            return time.perf_counter() - started

        one_step(True), one_step(False)  # warm-up: first-call costs on both sides
        for _ in range(rounds * steps):  # step by step, so load drifts hit both sides
            bare_times.append(one_step(False))
            sdk_times.append(one_step(True))
    bare, sdk = statistics.median(bare_times), statistics.median(sdk_times)
    ratio = sdk / bare
    verdict = "OK" if ratio <= target else "ABOVE TARGET"
    print(
        f"{label:<34} bare {1e3 * bare:8.2f} ms/step   sdk {1e3 * sdk:8.2f} ms/step   "
        f"ratio {ratio:.3f} (target ≤ {target}) {verdict}"
    )
    # the statistics are finished K steps at once: the few steps that carry a batch's
    # finish are outliers a median ignores, so the ratio of means is printed beside it
    mean_ratio = statistics.fmean(sdk_times) / statistics.fmean(bare_times)
    print(f"{'':<34} ratio of means {mean_ratio:.3f} (batched finishes included)")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=10)
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
                list(objective.parameters()), args.rounds, args.steps * 5, 1.25)  # fmt: skip
    if args.only in (None, "resnet"):
        model = create_model("resnet18", (3, 32, 32), 128)
        inputs, labels = torch.randn(64, 3, 32, 32), torch.arange(64) % 10
        loss_fn = _cosine_softmax(10, 128)
        measure("ResNet-18 batch 64 on 32×32", model, lambda: (inputs, labels), loss_fn,
                loss_fn.parameters, args.rounds, args.steps, 1.05)  # fmt: skip


if __name__ == "__main__":
    main()
