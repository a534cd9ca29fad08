"""Evaluation at benchmark scale: SphereScope vs the faiss floor vs pytorch-metric-learning.

Data: clustered synthetic unit embeddings (N × D float32, ``--classes`` classes of equal
size, Gaussian spread around random centres), written once per size to a ``.npy`` file
that every measured process memory-maps (its pages count in that process's peak).

Implementations, each in its own subprocess (time, CPU time and the kernel's peak
resident memory, ``ru_maxrss``, of that process alone), killed at ``--timeout``:

- ``floor``: a bare faiss exact kNN (``IndexFlatIP``) of depth = the largest class
  (the depth MAP@R needs) plus a bare ``faiss.Kmeans(k = classes, niter = 20)`` and the
  assignment of every point: the least any exact evaluation of these metrics does;
- ``ours``: ``retrieval_scores`` (R@1/2/4/8, precision@1, R-precision, MAP@R, 10-NN)
  + ``clustering_scores`` (NMI, AMI, F1) from ``sphere_engine.metrics``;
- ``pml``: pytorch-metric-learning's ``AccuracyCalculator(k="max_bin_count")``
  (precision@1, R-precision, MAP@R, NMI, AMI), its memory-bounded setting;
- ``ivf``: the optional approximate index (``sphere_engine.metrics.approximate``),
  whose Recall@1 is printed beside the exact one with their difference.

A run that exceeds ``--timeout`` is reported as a time-out, one that the kernel kills
or that raises MemoryError as out of memory. Ratios are against the floor measured in
the same invocation (``--sizes`` picks the table's rows, e.g. ``60000x128,200000x128``).
1M × 512 exact is a GPU case (faiss-gpu); on a CPU only ``ivf`` is meaningful there.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = ("floor", "ours", "pml", "ivf")
DEFAULT_SIZES = "60000x128,200000x128,60000x512,200000x512,1000000x128,1000000x512"
SPREAD = 0.6


def make_data(count: int, dim: int, classes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Clustered unit rows (count × dim float32) and int64 labels, classes of equal size."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = np.arange(count, dtype=np.int64) % classes
    points = np.empty((count, dim), dtype=np.float32)
    for start in range(0, count, 65_536):  # bounded memory while generating 1M × 512
        part = slice(start, start + 65_536)
        noise = rng.standard_normal((labels[part].size, dim)).astype(np.float32)
        points[part] = centres[labels[part]] + SPREAD / np.sqrt(dim) * noise
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return points, labels


def _floor(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    import faiss

    unit = np.ascontiguousarray(x)
    index = faiss.IndexFlatIP(unit.shape[1])
    index.add(unit)
    depth = int(np.bincount(y).max())
    for start in range(0, unit.shape[0], 65_536):
        index.search(unit[start : start + 65_536], depth)
    kmeans = faiss.Kmeans(unit.shape[1], int(np.unique(y).size), niter=20, seed=1234)
    kmeans.train(unit)
    kmeans.index.search(unit, 1)
    return {"depth": float(depth)}


def _ours(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from sphere_engine.metrics.clustering import clustering_scores
    from sphere_engine.metrics.retrieval import retrieval_scores

    unit = np.ascontiguousarray(x)  # rows are unit already; faiss copies them anyway
    result = retrieval_scores(unit, y, unit, y, exclude_self=True)
    return result | clustering_scores(unit, y)


def _pml(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    import torch
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

    include = ("precision_at_1", "r_precision", "mean_average_precision_at_r", "NMI", "AMI")
    calculator = AccuracyCalculator(include=include, k="max_bin_count", device=torch.device("cpu"))
    values = calculator.get_accuracy(torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(y))
    return {
        "precision@1": values["precision_at_1"],
        "map@r": values["mean_average_precision_at_r"],
        "nmi": values["NMI"],
    }


def _ivf(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from sphere_engine.metrics.approximate import ivf_recall_at_1

    return ivf_recall_at_1(x, y)


def worker(implementation: str, data: str, labels: str) -> None:
    """One measured run in this process; prints one JSON line."""
    # Every process imports the same libraries before the clock starts, so the time
    # is the work and the peaks share one baseline.
    sys.path.insert(0, str(ROOT))
    import faiss  # noqa: F401
    import torch  # noqa: F401

    import sphere_engine.metrics  # noqa: F401

    if implementation == "pml":
        import pytorch_metric_learning.utils.accuracy_calculator  # noqa: F401
    x = np.load(data, mmap_mode="r")
    y = np.load(labels)
    compute = {"floor": _floor, "ours": _ours, "pml": _pml, "ivf": _ivf}[implementation]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_start, start = usage.ru_utime + usage.ru_stime, time.perf_counter()
    try:
        values = compute(x, y)
    except MemoryError as error:
        print(json.dumps({"error": f"out of memory ({error})"}))
        return
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu": usage.ru_utime + usage.ru_stime - cpu_start,
                "peak_mb": usage.ru_maxrss / 1024,  # KiB on Linux
                "values": {k: float(v) for k, v in values.items()},
            }
        )
    )


def measure(implementation: str, data: Path, labels: Path, timeout: float) -> dict:
    """Run one implementation in a fresh process; time-out and OOM become results."""
    command = [sys.executable, __file__, "--worker", implementation, str(data), str(labels)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"time-out (> {timeout:.0f} s)"}
    if done.returncode in (-9, 137):
        return {"error": "out of memory (killed by the kernel)"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        kind = "out of memory" if "memory" in last.lower() else "failed"
        return {"error": f"{kind}: {last[:200]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cell(result: dict, floor: dict | None) -> str:
    if "error" in result:
        return result["error"]
    text = (
        f"{result['seconds']:.1f} s (cpu {result['cpu']:.0f} s), {result['peak_mb'] / 1024:.2f} GB"
    )
    if floor is not None and "error" not in floor:
        text += f", {result['seconds'] / floor['seconds']:.2f}× floor wall"
        text += f" / {result['cpu'] / floor['cpu']:.2f}× cpu"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="NxD,... (rows of the table)")
    parser.add_argument("--classes", type=int, default=2000)
    parser.add_argument("--implementations", default=",".join(IMPLEMENTATIONS))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    chosen = [name.strip() for name in args.implementations.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(IMPLEMENTATIONS))
    if unknown:
        parser.error(f"unknown implementations {unknown}; known: {list(IMPLEMENTATIONS)}")
    print(f"machine: {platform.processor() or platform.machine()}, ", end="")
    print(f"{len(__import__('os').sched_getaffinity(0))} cores; classes {args.classes}")
    with tempfile.TemporaryDirectory(prefix="eval-scale-") as folder:
        for size in args.sizes.split(","):
            count, dim = (int(part) for part in size.lower().split("x"))
            x, y = make_data(count, dim, args.classes)
            data, labels = Path(folder) / "x.npy", Path(folder) / "y.npy"
            np.save(data, x)
            np.save(labels, y)
            input_gb = x.nbytes / 2**30
            del x
            results = {name: measure(name, data, labels, args.timeout) for name in chosen}
            floor = results.get("floor")
            print(f"\n{count} × {dim}, {args.classes} classes (input {input_gb:.2f} GB):")
            for name in chosen:
                print(f"  {name:6s} {_cell(results[name], None if name == 'floor' else floor)}")
            ours, ivf = results.get("ours", {}), results.get("ivf", {})
            if "values" in ours and "values" in ivf:
                exact = ours["values"]["recall@1"]
                approx = ivf["values"]["recall@1_approx"]
                print(f"  IVF Recall@1 {approx:.4f} vs exact {exact:.4f}: {approx - exact:+.4f}")
            if "values" in ours and "values" in results.get("pml", {}):
                mine, theirs = ours["values"], results["pml"]["values"]
                print(
                    f"  MAP@R ours {mine['map@r']:.4f} / pml {theirs['map@r']:.4f}; "
                    f"NMI ours {mine['nmi']:.4f} / pml {theirs['nmi']:.4f}"
                )
            print("  raw:", json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
