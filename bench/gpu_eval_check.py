"""The evaluation's GPU checks (device kNN, k-means), one script for a lent GPU
machine (``gpu_eval_check.sh``).

Needs torch (with CUDA), numpy and scikit-learn; faiss (CPU or GPU build) is used when
importable. Three parts, each printed and written to ``$OUT/gpu_eval_check.json``:

1. exactness: the ``torch-cuda`` search (and ``faiss-gpu`` when faiss sees a GPU) against
   the CPU search (faiss, else torch) on data with many exact ties, leave-one-out and
   query/gallery, with the reference resident and streamed in blocks: identical ids
   and scores (ties by index);
2. the k-means on the device against the same recipe on the CPU (``device_kmeans``);
3. ``bench/eval_scale.py --device cuda`` at 200k × 512 and 1M × 512 with 10,000
   classes: ours against the floor (bare torch matmul + topk, bare torch k-means).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sphere_engine.metrics import backend as backends  # noqa: E402
from sphere_engine.metrics.device_kmeans import device_kmeans_labels  # noqa: E402
from sphere_engine.metrics.neighbors import ranked_neighbors  # noqa: E402

SIZES = "200000x512,1000000x512"
CLASSES = 10_000
TIMEOUT_S = 150  # per measured process


def tied_points(count: int, dim: int, seed: int) -> np.ndarray:
    """Rows with four ±0.5 entries: every cosine an exact multiple of 1/4 (many ties)."""
    rng = np.random.default_rng(seed)
    points = np.zeros((count, dim), dtype=np.float32)
    for row in range(count):
        points[row, rng.choice(dim, 4, replace=False)] = rng.choice([-0.5, 0.5], 4)
    return points


def ranking(queries, reference, k, exclude_self, backend, budget_mb=256.0):
    ids = np.full((queries.shape[0], k), -1, dtype=np.int64)
    scores = np.zeros((queries.shape[0], k), dtype=np.float32)
    for chunk in ranked_neighbors(
        queries, reference, k, exclude_self=exclude_self, backend=backend,
        memory_budget_mb=budget_mb,
    ):  # fmt: skip
        ids[chunk.queries], scores[chunk.queries] = chunk.indices, chunk.scores
    return ids, scores


def exactness() -> dict:
    cpu = "faiss" if backends.FAISS_AVAILABLE else "torch"
    devices = ["torch-cuda"] + (["faiss-gpu"] if backends.faiss_gpus() > 0 else [])
    points = tied_points(4_000, 64, seed=0)
    points[100:110] = points[99]  # duplicates of a query
    rng = np.random.default_rng(1)
    clustered = rng.standard_normal((12_000, 128)).astype(np.float32)
    clustered /= np.linalg.norm(clustered, axis=1, keepdims=True)
    cases = {
        "ties, leave-one-out, k=10": (points, points, 10, True),
        "ties, leave-one-out, k=300": (points, points, 300, True),
        "query/gallery, k=50": (clustered[:2000], clustered[2000:], 50, False),
    }
    report = {}
    for name, (queries, reference, k, loo) in cases.items():
        expected = ranking(queries, reference, k, loo, cpu)
        for device in devices:
            # 1 MiB: the reference streamed in blocks (the device search's other path)
            for budget in (256.0, 1.0):
                started = time.perf_counter()
                found = ranking(queries, reference, k, loo, device, budget)
                same_ids = bool((found[0] == expected[0]).all())
                gap = float(np.abs(found[1] - expected[1]).max())
                key = f"{name} [{device}, budget {budget:g} MiB]"
                report[key] = {
                    "ids_identical": same_ids,
                    "rows_differing": int((found[0] != expected[0]).any(axis=1).sum()),
                    "max_score_gap": gap,
                    "seconds": time.perf_counter() - started,
                }
                print(f"  {key}: ids identical {same_ids}, max |score gap| {gap:.2e}")
    return {"reference_backend": cpu, "cases": report}


def kmeans_agreement() -> dict:
    rng = np.random.default_rng(2)
    centres = rng.standard_normal((50, 64)).astype(np.float32)
    labels = np.arange(20_000) % 50
    points = centres[labels] + 0.3 * rng.standard_normal((20_000, 64)).astype(np.float32)
    options = {"train_count": 12_800, "iterations": 20, "seed": 0}
    on_gpu = device_kmeans_labels(points, 50, device="cuda", **options)
    on_cpu = device_kmeans_labels(points, 50, device="cpu", **options)
    agreement = float((on_gpu == on_cpu).mean())
    print(f"  device k-means: cuda and cpu assignments agree on {agreement:.4%} of points")
    return {"assignment_agreement": agreement}


def scale_rows(out: Path | None) -> list:
    target = (out or Path("/tmp")) / "eval_scale_gpu.json"
    command = [
        sys.executable, str(ROOT / "bench" / "eval_scale.py"), "--device", "cuda",
        "--sizes", os.environ.get("GPU_CHECK_SIZES", SIZES), "--classes", str(CLASSES),
        "--timeout", str(TIMEOUT_S), "--json", str(target),
    ]  # fmt: skip
    subprocess.run(command, check=False)
    return json.loads(target.read_text()) if target.exists() else []


def main() -> None:
    if not torch.cuda.is_available():
        sys.exit("gpu_eval_check: torch sees no CUDA device")
    out = Path(os.environ["OUT"]) if os.environ.get("OUT") else None
    result: dict = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "faiss": None if backends.faiss is None else backends.faiss.__version__,
        "faiss_gpus": backends.faiss_gpus(),
        "auto_backend": backends.resolve_backend("auto"),
        "cpus": len(os.sched_getaffinity(0)),
        "machine": platform.machine(),
    }
    print(json.dumps(result))
    started = time.perf_counter()
    print("exactness against the CPU search:")
    result["exactness"] = exactness()
    print("k-means on the device:")
    result["kmeans"] = kmeans_agreement()
    print("scale rows (eval_scale.py --device cuda):", flush=True)
    result["scale"] = scale_rows(out)
    result["total_seconds"] = time.perf_counter() - started
    print(f"total {result['total_seconds']:.0f} s")
    if out is not None:
        (out / "gpu_eval_check.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
