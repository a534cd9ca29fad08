"""Images/s of a launched ResNet-50 run (diagnostics on) vs a bare PyTorch loop.

Both sides train the same backbone (``model.*`` through ``build_backbone``), objective,
optimiser, batch, mixed precision, channels_last and DataLoader (``iter_batches`` with the
same workers, pinned memory on CUDA) on the same image files, in alternating rounds in
one process. The launched side is ``run_training`` with the default diagnostics (every
step logged, 16 tracked samples, gradient statistics) into the in-memory tracker. Step
times are taken between the ends of consecutive steps (set-up, the first step and the
final evaluation excluded); images/s = batch / median step time, and the ratio is
launched / bare (target ≥ 0.95).

The images are a generated class-per-folder tree (``image_folder``) decoded from PNG by
the loader, so decoding and augmentation are part of both sides.

    .venv/bin/python bench/backbone_throughput.py                 # CPU, 64 px
    .venv/bin/python bench/backbone_throughput.py --device cuda --image-size 224 \\
        --batch 120 --amp bf16 --workers 8 --steps 60
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from sphere_engine.config import RunConfig
from sphere_engine.config.image_size import resolved_data_options
from sphere_engine.config.validation import validate
from sphere_engine.data import create_dataset, iter_batches
from sphere_engine.models.build import build_backbone
from sphere_engine.objective import build_objective
from sphere_engine.optim import build_optimizer
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training
from sphere_engine.training.device import resolve_device
from sphere_engine.training.precision import build_precision

TARGET = 0.95


def write_tree(root: Path, classes: int, per_class: int, side: int) -> None:
    rng = np.random.default_rng(0)
    for cls in range(classes):
        folder = root / f"class_{cls:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(per_class):
            pixels = rng.integers(0, 255, (side, side, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(folder / f"{k}.png")


def bare_step_times(config: RunConfig) -> list[float]:
    """Data, forward (autocast), backward, step: the loop a user would write."""
    training, data = config.training, config.data
    torch.manual_seed(training.seed)
    device = resolve_device(training.device)
    splits = create_dataset(
        data.name, root=data.root, split=data.split, seed=training.seed,
        **resolved_data_options(config),
    )  # fmt: skip
    model, _ = build_backbone(config.model, splits.input_shape)
    model = model.to(device)
    if training.channels_last:
        model = model.to(memory_format=torch.channels_last)
    objective = build_objective(config, splits.num_classes_train).to(device)
    optimizer = build_optimizer(config.optimizer, model, objective.parameters())
    precision = build_precision(training.amp, device)
    batches = iter_batches(
        splits.train, data.batch_size, data.samples_per_class, seed=training.seed,
        num_workers=data.num_workers, device=device,
    )  # fmt: skip
    model.train()
    ends = []
    for _ in range(training.steps):
        inputs, labels, _ = next(batches)
        if training.channels_last:
            inputs = inputs.contiguous(memory_format=torch.channels_last)
        with precision.autocast():
            embeddings = model(inputs)
        loss = objective(embeddings.float(), labels)
        optimizer.zero_grad(set_to_none=True)
        precision.backward(loss)
        precision.step(optimizer)
        if device.type == "cuda":
            torch.cuda.synchronize()
        ends.append(time.perf_counter())
    return [b - a for a, b in itertools.pairwise(ends[1:])]


class _StepClock(InMemoryTracker):
    """Stamps the end of every training step (``track_progress`` closes each one)."""

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[float] = []

    def track_progress(self, step: int, total: int) -> None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        self.ends.append(time.perf_counter())


def launched_step_times(config: RunConfig) -> list[float]:
    clock = _StepClock()
    run_training(config, clock)
    logged = {step for step, name, _, _ in clock.scalars if name == "grad/norm_mean"}
    assert len(logged) == config.training.steps, "every step must log its diagnostics"
    return [b - a for a, b in itertools.pairwise(clock.ends[1:])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--samples-per-class", type=int, default=4)
    parser.add_argument("--amp", default="off", choices=["off", "bf16", "fp16"])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--model", default="resnet50")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {args.device}")
    with tempfile.TemporaryDirectory() as folder:
        classes = max(2 * args.batch // args.samples_per_class, 8)
        write_tree(Path(folder), classes, 2 * args.samples_per_class, args.image_size + 16)
        config = RunConfig.from_dict(
            {
                "data": {
                    "name": "image_folder",
                    "root": folder,
                    "split": "standard",
                    "batch_size": args.batch,
                    "samples_per_class": args.samples_per_class,
                    "num_workers": args.workers,
                    "image_size": args.image_size,
                },
                "model": {"name": args.model, "embedding_dim": 512},
                "objective": {"kind": "loss", "name": "multi_similarity"},
                "optimizer": {"name": "adam", "lr": 1e-5, "head_lr": 1e-4},
                "training": {
                    "steps": args.steps,
                    "device": args.device,
                    "amp": args.amp,
                    "channels_last": args.device == "cuda",
                },
                "diagnostics": {"eval_every": 10**6, "eval_max_samples": 64},
            }
        )
        validate(config)
        bare: list[float] = []
        launched: list[float] = []
        for _ in range(args.rounds):  # interleaved: load drifts hit both sides
            bare += bare_step_times(config)
            launched += launched_step_times(config)
    bare_rate = args.batch / statistics.median(bare)
    launched_rate = args.batch / statistics.median(launched)
    ratio = launched_rate / bare_rate
    verdict = "OK" if ratio >= TARGET else "BELOW TARGET"
    print(
        f"{args.model} {args.image_size} px, batch {args.batch}, amp {args.amp}, "
        f"{args.workers} workers: bare {bare_rate:.1f} img/s, launched {launched_rate:.1f} "
        f"img/s, ratio {ratio:.3f} (target ≥ {TARGET}) {verdict}"
    )


if __name__ == "__main__":
    main()
