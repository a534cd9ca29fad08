"""Images/s the training loader delivers: uint8 pixels normalised after the batch's move
(what ``iter_batches`` does towards an accelerator) vs float32 items normalised in the
workers (what it does towards a CPU).

Both sides read the same generated image files through ``ImageFolderData`` with the
papers' train pipeline (random-resized crop to ``--image-size``, flip) and the same
``iter_batches`` (P×K batches, ``--workers`` processes), ``pixels_to_device`` on and
off. Alternating blocks
of ``--batches`` batches each, after ``--warmup`` untimed ones; images/s = batch ×
batches / seconds; the ratio is the median uint8 block over the median float block. On
a CUDA machine (``--device cuda``) the batches are also pinned and moved; here the CPU
side alone: decode, transform, collate, the hand-over between processes.

    .venv/bin/python bench/loader_throughput.py            # 224 px, batch 64, 2 workers
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's engine

from sphere_engine.data import ImageFolderData, iter_batches
from sphere_engine.data.image_pipeline import train_transform


def write_photos(root: Path, classes: int, per_class: int, side: int) -> list[tuple[Path, int]]:
    """Smooth random images (gradients plus noise) saved as JPEG, as photos are."""
    rng = np.random.default_rng(0)
    ramp = np.linspace(0, 1, side)[None, :, None]
    files = []
    for cls in range(classes):
        for k in range(per_class):
            colour = rng.uniform(0, 255, (1, 1, 3))
            pixels = colour * ramp + rng.normal(0, 20, (side, side, 3))
            path = root / f"{cls}_{k}.jpg"
            Image.fromarray(pixels.clip(0, 255).astype(np.uint8)).save(path, quality=90)
            files.append((path, cls))
    return files


def block(data: ImageFolderData, args: argparse.Namespace, pixels: bool) -> float:
    batches = iter_batches(
        data, args.batch, 4, seed=0, num_workers=args.workers, device=args.device,
        pixels_to_device=pixels,
    )  # fmt: skip
    for _ in range(args.warmup):
        next(batches)
    started = time.perf_counter()
    for _ in range(args.batches):
        inputs, _, _ = next(batches)
    if args.device == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - started
    assert inputs.dtype == torch.float32
    batches.close()
    return args.batch * args.batches / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--source-side", type=int, default=320)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        files = write_photos(Path(folder), 32, 8, args.source_side)
        data = ImageFolderData(
            [p for p, _ in files], [c for _, c in files], args.image_size,
            transform=train_transform(args.image_size),
        )  # fmt: skip
        uint8: list[float] = []
        floats: list[float] = []
        for round_ in range(args.rounds):
            floats.append(block(data, args, pixels=False))
            uint8.append(block(data, args, pixels=True))
            print(f"round {round_ + 1}: float32 items {floats[-1]:.1f} img/s, uint8 pixels "
                  f"{uint8[-1]:.1f} img/s ({uint8[-1] / floats[-1]:.2f}×)", flush=True)  # fmt: skip
    ratio = statistics.median(uint8) / statistics.median(floats)
    print(
        f"{args.image_size} px from {args.source_side}-px JPEGs, batch {args.batch}, "
        f"{args.workers} workers, {args.device}: float32 items {statistics.median(floats):.1f} "
        f"img/s, uint8 pixels {statistics.median(uint8):.1f} img/s: {ratio:.2f}×"
    )


if __name__ == "__main__":
    main()
