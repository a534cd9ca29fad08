"""Where a launched run's training steps make the host wait for the GPU (CUDA only).

A step that reads a device value on the host (``.item()``, ``int(tensor)``, a boolean
selection's size) stops the host until the device catches up, and the device then idles
while the host queues the next kernels. This runs a short launched run (ResNet-18 on a
generated image folder, bf16, channels_last, the default diagnostics) with
``torch.cuda.set_sync_debug_mode("warn")`` on from the end of step 2 to the end of
step ``--steps - 1`` (set-up, evaluation and the last step's read are outside) and prints
each distinct synchronising line of this repository with its count. The loop reads a
step's values once the next step is queued: that read is one expected line per step.

    python bench/gpu_sync_points.py
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's engine

from bench.backbone_throughput import write_tree
from sphere_engine.config import RunConfig
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training

REPOSITORY = str(Path(__file__).resolve().parents[1])


class _SyncWatch(InMemoryTracker):
    def __init__(self, first: int, last: int) -> None:
        super().__init__()
        self.first, self.last = first, last

    def track_progress(self, step: int, total: int) -> None:
        super().track_progress(step, total)
        if step == self.first:
            torch.cuda.set_sync_debug_mode("warn")
        elif step == self.last:
            torch.cuda.set_sync_debug_mode(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--loss", default="multi_similarity")
    args = parser.parse_args()
    sites: collections.Counter[str] = collections.Counter()

    def record(message, category, filename, lineno, file=None, line=None) -> None:
        frames = [f for f in traceback.extract_stack()[:-1] if f.filename.startswith(REPOSITORY)]
        inner = [f for f in frames if "/bench/" not in f.filename][-2:]
        where = [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(inner)]
        sites[" ← ".join(where)] += 1

    with tempfile.TemporaryDirectory() as folder:
        write_tree(Path(folder), 16, 10, 72)
        config = RunConfig.from_dict(
            {
                "data": {"name": "image_folder", "root": folder, "split": "standard",
                         "batch_size": 32, "samples_per_class": 4, "image_size": 64},
                "model": {"name": "resnet18", "embedding_dim": 128},
                "objective": {"kind": "loss", "name": args.loss},
                "training": {"steps": args.steps, "device": "cuda", "amp": "bf16",
                             "channels_last": True},
                "diagnostics": {"eval_every": 10**6, "eval_max_samples": 64, "tracked_every": 2},
            }
        )  # fmt: skip
        warnings.showwarning = record
        warnings.simplefilter("always")
        run_training(config, _SyncWatch(2, args.steps - 1))
    watched = args.steps - 3
    print(f"{args.loss}: synchronising lines over {watched} watched steps (count):")
    for site, count in sites.most_common():
        print(f"  {count:3d}  {site}")
    if not sites:
        print("  none")


if __name__ == "__main__":
    main()
