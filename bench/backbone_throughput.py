"""Images/s of a launched ResNet-50 run (default diagnostics on) vs a bare PyTorch loop.

Both sides train the same backbone (``model.*`` through ``build_backbone``), objective,
optimiser, batch, mixed precision, channels_last and DataLoader (``iter_batches`` with
the same resolved workers, pinned memory on CUDA) on the same image files. They run in
alternating blocks in one process (bare, launched, launched, bare, ..., ABBA): each
block is a fresh run of ``--steps`` steps, timed from the end of its ``--warmup``-th
step to the end of its last, with the device synchronised at those two points only (a
bare loop a user writes does not synchronise every step; the launched run's own
per-step transfer is part of its cost). The launched side is ``run_training`` with the
default diagnostics (every step logged with gradient statistics, 16 tracked samples
embedded every ``diagnostics.tracked_every`` steps) into the in-memory tracker; its
set-up and final evaluation are outside the timed span. images/s = batch × timed steps
/ timed seconds per block; the ratio is the median launched block's rate over the
median bare block's (target ≥ 0.95).

The images are a generated class-per-folder tree (``image_folder``) decoded from PNG
by the loader, so decoding and augmentation are part of both sides. Noise PNGs of
``--source-side`` pixels (default: image size + 1/8) are as costly to decode as photos,
which can make the loader, not the device, the bound: ``--source-side 64`` makes decoding
cheap (the crop then upsamples). Each round also times the device ceiling, the bare
step on one batch already on the device (no loader), and the report says which of
loader and device bounds the bare loop. Needs only torch,
torchvision, numpy and Pillow besides this repository. With ``$OUT`` set, the result
is also written to ``$OUT/backbone_throughput.json``.

    .venv/bin/python bench/backbone_throughput.py                   # CPU, 32 px, batch 32
    python bench/backbone_throughput.py --device cuda --image-size 224 --batch 64 \\
        --amp bf16 --workers 12 --steps 300 --warmup 30 --rounds 3 --warmup-block \\
        --profile 30  # ≈ 2.5 min on an H200 (bench/gpu_diagnostics_check.sh)

``--warmup-block`` runs one untimed block of each side first (cuDNN's autotuning, the
diagnostics' CUDA-graph capture, the GPU's clocks); ``--profile STEPS`` then times
STEPS steps of each side under ``torch.profiler`` (device busy time, host syncs, the
operators with the most host and device time; written to ``$OUT/profile_*.txt``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's engine

from sphere_engine.config import RunConfig
from sphere_engine.data import create_dataset, iter_batches
from sphere_engine.data.loader_workers import resolve_num_workers
from sphere_engine.models.build import build_backbone
from sphere_engine.objective import build_objective
from sphere_engine.optim import build_optimizer
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training
from sphere_engine.training.device import resolve_device
from sphere_engine.training.precision import build_precision
from sphere_engine.validation import validate
from sphere_engine.validation.image_size import resolved_data_options

TARGET = 0.95
StepHook = Callable[[], None] | None  # called at the end of every step (the profiler's)


def write_tree(root: Path, classes: int, per_class: int, side: int) -> None:
    rng = np.random.default_rng(0)
    for cls in range(classes):
        folder = root / f"class_{cls:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(per_class):
            pixels = rng.integers(0, 255, (side, side, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(folder / f"{k}.png")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bare_block(
    config: RunConfig, warmup: int, *, one_batch: bool = False, on_step: StepHook = None
) -> float:
    """Seconds of steps warmup+1 … steps of the loop a user would write: data, forward
    (autocast), backward, optimiser step. ``one_batch``: the device ceiling, every step
    on the first batch (already on the device), no loader in the loop."""
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
        num_workers=resolve_num_workers(data.num_workers, splits.train), device=device,
    )  # fmt: skip
    model.train()
    started = 0.0
    first = next(batches)
    if one_batch:
        batches.close()  # its loader workers stop: nothing competes with the device loop
    for step in range(1, training.steps + 1):
        inputs, labels, _ = first if one_batch or step == 1 else next(batches)
        if training.channels_last:
            inputs = inputs.contiguous(memory_format=torch.channels_last)
        with precision.autocast():
            embeddings = model(inputs)
        loss = objective(embeddings.float(), labels)
        optimizer.zero_grad(set_to_none=True)
        precision.backward(loss)
        precision.step(optimizer)
        if on_step is not None:
            on_step()
        if step == warmup:
            synchronize(device)
            started = time.perf_counter()
    synchronize(device)
    return time.perf_counter() - started


class _BlockClock(InMemoryTracker):
    """Stamps the end of step ``warmup`` and of the last step (``track_progress``
    closes each step), synchronising the device there only."""

    def __init__(self, warmup: int, device: torch.device, on_step: StepHook = None) -> None:
        super().__init__()
        self.warmup, self.device, self.on_step = warmup, device, on_step
        self.started = self.ended = 0.0

    def track_progress(self, step: int, total: int) -> None:
        super().track_progress(step, total)
        if self.on_step is not None:
            self.on_step()
        if step == self.warmup:
            synchronize(self.device)
            self.started = time.perf_counter()
        elif step == total:
            synchronize(self.device)
            self.ended = time.perf_counter()


def launched_block(config: RunConfig, warmup: int, *, on_step: StepHook = None) -> float:
    clock = _BlockClock(warmup, resolve_device(config.training.device), on_step)
    run_training(config, clock)
    logged = {step for step, name, _, _ in clock.scalars if name == "grad/norm_mean"}
    assert len(logged) == config.training.steps, "every step must log its diagnostics"
    assert clock.sample_norms, "the tracked samples must be followed"
    return clock.ended - clock.started


def profile_both(args: argparse.Namespace, config: RunConfig, folder: str) -> None:
    """One block of each side under ``torch.profiler``: how busy the device was, and the
    operators that took the most host and device time (printed, and written to $OUT)."""
    from torch.profiler import ProfilerActivity, profile, schedule

    short = copy.deepcopy(config)
    short.training.steps = args.warmup + args.profile
    activities = [ProfilerActivity.CPU]
    if args.device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    for name, block in (("bare", bare_block), ("launched", launched_block)):
        # steps warmup+1 … the last: the same span the rounds time, without the set-up
        active = schedule(wait=args.warmup - 1, warmup=1, active=args.profile, repeat=1)
        with profile(activities=activities, schedule=active) as prof:
            seconds = block(short, args.warmup, on_step=prof.step)
        events = prof.key_averages()
        device_us = sum(e.self_device_time_total for e in events)
        syncs = sum(e.count for e in events if "Synchronize" in e.key or e.key == "cudaMemcpy")
        summary = (
            f"profile {name}: {args.profile} steps, timed span {seconds:.2f} s, device busy "
            f"{device_us / 1e6:.2f} s in all, host syncs/blocking copies {syncs}"
        )
        print(summary, flush=True)
        by_device = events.table(sort_by="self_device_time_total", row_limit=25)
        by_host = events.table(sort_by="self_cpu_time_total", row_limit=25)
        print(by_host, flush=True)
        out = os.environ.get("OUT")
        if out:
            Path(out, f"profile_{name}.txt").write_text(
                f"{summary}\n\nby device time\n{by_device}\n\nby host time\n{by_host}\n"
            )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--samples-per-class", type=int, default=4)
    parser.add_argument("--amp", default=None, choices=["off", "bf16", "fp16"],
                        help="default: bf16 on CUDA, off on CPU")  # fmt: skip
    parser.add_argument("--channels-last", default=None, action=argparse.BooleanOptionalAction,
                        help="default: on with CUDA")  # fmt: skip
    parser.add_argument("--source-side", type=int, default=0,
                        help="side of the generated PNGs (0: image size + 1/8)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=-1, help="data.num_workers (-1: auto)")
    parser.add_argument("--steps", type=int, default=12, help="steps per block")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per block")
    parser.add_argument("--rounds", type=int, default=2, help="bare + launched blocks")
    parser.add_argument("--warmup-block", action="store_true",
                        help="one untimed block of each side before the rounds")  # fmt: skip
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--profile", type=int, default=0, metavar="STEPS",
                        help="then profile STEPS steps of each side")  # fmt: skip
    args = parser.parse_args()
    if args.amp is None:
        args.amp = "bf16" if args.device == "cuda" else "off"
    if args.channels_last is None:
        args.channels_last = args.device == "cuda"
    if not 1 <= args.warmup < args.steps:
        parser.error("--warmup must be at least 1 and below --steps")
    return args


def run_config(args: argparse.Namespace, root: str) -> RunConfig:
    config = RunConfig.from_dict(
        {
            "data": {
                "name": "image_folder",
                "root": root,
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
                "channels_last": args.channels_last,
            },
            # the default diagnostics; evaluation only at the end (outside the timing)
            "diagnostics": {"eval_every": 10**6, "eval_max_samples": 64},
        }
    )
    validate(config)
    return config


def main() -> None:
    args = parse_args()
    load = os.getloadavg()
    print(f"load average {' '.join(f'{x:.2f}' for x in load)}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {args.device}")
    timed_images = args.batch * (args.steps - args.warmup)
    bare: list[float] = []
    launched: list[float] = []
    ceiling: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        classes = max(2 * args.batch // args.samples_per_class, 8)
        # 10+ images a class: the 30 % test part keeps genuine pairs for the verification
        per_class = max(10, 2 * args.samples_per_class)
        side = args.source_side or args.image_size + args.image_size // 8
        write_tree(Path(folder), classes, per_class, side)
        config = run_config(args, folder)
        if args.warmup_block:  # untimed: compiles kernels, warms caches and clocks
            launched_block(config, args.warmup)
            bare_block(config, args.warmup)
        for round_ in range(args.rounds):  # alternating blocks: load drifts hit both sides
            # ABBA: each side goes first in every other round (a block after another's
            # set-up and teardown may find the device's clocks lowered)
            sides = [("bare", bare_block), ("launched", launched_block)]
            for name, block in sides if round_ % 2 == 0 else sides[::-1]:
                (bare if name == "bare" else launched).append(
                    timed_images / block(config, args.warmup)
                )
            ceiling.append(timed_images / bare_block(config, args.warmup, one_batch=True))
            print(
                f"round {round_ + 1}: bare {bare[-1]:.1f} img/s, launched {launched[-1]:.1f} "
                f"img/s ({launched[-1] / bare[-1]:.3f}); device ceiling {ceiling[-1]:.1f} img/s",
                flush=True,
            )
        if args.profile:
            profile_both(args, config, folder)
    bare_rate, launched_rate = statistics.median(bare), statistics.median(launched)
    ceiling_rate = statistics.median(ceiling)
    ratio = launched_rate / bare_rate
    verdict = "OK" if ratio >= TARGET else "BELOW TARGET"
    # within 10 % of the device ceiling the device bounds the loop, else the loader does
    bound = "device" if bare_rate >= 0.9 * ceiling_rate else "loader"
    print(
        f"{args.model} {args.image_size} px (source {side} px), batch {args.batch}, amp "
        f"{args.amp}, channels_last {args.channels_last}, workers {args.workers}: bare "
        f"{bare_rate:.1f} img/s ({bare_rate / ceiling_rate:.2f} of the device ceiling "
        f"{ceiling_rate:.1f}: {bound}-bound), launched {launched_rate:.1f} img/s, ratio "
        f"{ratio:.3f} (target ≥ {TARGET}) {verdict}"
    )
    out = os.environ.get("OUT")
    if out:
        result = {
            "args": vars(args),
            "device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
            "torch": torch.__version__,
            "load_average": load,
            "bare_images_per_s": bare,
            "launched_images_per_s": launched,
            "device_ceiling_images_per_s": ceiling,
            "source_side": side,
            "bound": bound,
            "ratio": ratio,
            "target": TARGET,
        }
        Path(out, "backbone_throughput.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
