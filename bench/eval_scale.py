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
the same invocation (``--sizes`` picks the table's rows, e.g. ``60000x128,200000x128``;
``NxD/C`` gives a row its own class count). Every row where both ran also prints the
peer ratio, the peer's time over ours (wall and CPU; a peer time-out gives a lower
bound). ``--sizes peer`` is the peer-ratio table: 10k × 128 with 100 classes (the
10k case of ``eval_speed.py``; target ≥ 1.5×), 60k and 200k × 128 with 2,000.

``--device cuda`` is the GPU row (1M × 512 exact): ``floor`` is then a bare torch exact
kNN on the device (matmul + topk of the same depth, in query chunks) plus a bare torch
k-means of the same depth there (k = classes, 20 Lloyd iterations on the same sample
faiss would take, every point assigned); ``ours`` is the same metrics with the kNN
backend ``auto`` picks (faiss-gpu, else torch-cuda), recorded as ``backend``. Each also
reports the device's peak allocated memory. ``--json FILE`` writes every result.
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
DEVICE_IMPLEMENTATIONS = ("floor", "ours")  # pml and the IVF index are CPU rows
QUERY_CHUNK = 4096  # the device floor's queries per matmul
KMEANS_ITERATIONS = 20
SAMPLE_PER_CENTROID = 256  # faiss.Kmeans's default training sample per centroid
DEFAULT_SIZES = "60000x128,200000x128,60000x512,200000x512,1000000x128,1000000x512"
PEER_SIZES = "10000x128/100,60000x128,200000x128"
SPREAD = 1.2  # noise norm vs centres √2 apart: R@1 below 1 at 2,000 classes


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


def _floor_device(x: np.ndarray, y: np.ndarray, device: str) -> dict[str, float]:
    """Bare torch on the device: exact kNN of depth = the largest class (+ the query's
    own row), then k-means (k = classes) and the assignment of every point."""
    import torch

    torch.set_float32_matmul_precision("highest")  # exact float32, as ours
    points = torch.from_numpy(np.ascontiguousarray(x)).to(device)
    depth = int(np.bincount(y).max())
    for start in range(0, points.shape[0], QUERY_CHUNK):
        scores = points[start : start + QUERY_CHUNK] @ points.T
        torch.topk(scores, depth + 1, dim=1)
        del scores
    classes = int(np.unique(y).size)
    rng = np.random.default_rng(1234)
    train_count = min(points.shape[0], SAMPLE_PER_CENTROID * classes)
    train = points[torch.from_numpy(rng.choice(points.shape[0], train_count, False)).to(device)]
    centres = train[torch.from_numpy(rng.choice(train_count, classes, False)).to(device)]

    def assign(rows: torch.Tensor) -> torch.Tensor:
        half_sq = 0.5 * (centres * centres).sum(1)
        return torch.cat(
            [torch.argmax(part @ centres.T - half_sq, 1) for part in torch.split(rows, 65_536)]
        )

    for _ in range(KMEANS_ITERATIONS):
        nearest = assign(train)
        sums = torch.zeros_like(centres).index_add_(0, nearest, train)
        counts = torch.bincount(nearest, minlength=classes).clamp_min(1)
        centres = sums / counts[:, None]
    assign(points).cpu()  # on the host: the device's queue has finished
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


def worker(implementation: str, data: str, labels: str, device: str = "cpu") -> None:
    """One measured run in this process; prints one JSON line."""
    # Every process imports the same libraries before the clock starts, so the time
    # is the work and the peaks share one baseline.
    sys.path.insert(0, str(ROOT))
    import torch

    import sphere_engine.metrics  # noqa: F401
    from sphere_engine.metrics.backend import resolve_backend

    if device == "cpu":
        import faiss  # noqa: F401
    else:  # the device's context and kernels start before the clock, for both
        warm = torch.ones(256, 256, device=device)
        torch.topk(warm @ warm, 4, dim=1)
        torch.cuda.synchronize()

    if implementation == "pml":
        import pytorch_metric_learning.utils.accuracy_calculator  # noqa: F401
    x = np.load(data, mmap_mode="r")
    y = np.load(labels)
    compute = {"floor": _floor, "ours": _ours, "pml": _pml, "ivf": _ivf}[implementation]
    if device != "cpu" and implementation == "floor":
        compute = lambda x, y: _floor_device(x, y, device)  # noqa: E731
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_start, start = usage.ru_utime + usage.ru_stime, time.perf_counter()
    try:
        values = compute(x, y)
    except MemoryError as error:
        print(json.dumps({"error": f"out of memory ({error})"}))
        return
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result = {
        "seconds": seconds,
        "cpu": usage.ru_utime + usage.ru_stime - cpu_start,
        "peak_mb": usage.ru_maxrss / 1024,  # KiB on Linux
        "values": {k: float(v) for k, v in values.items()},
    }
    if implementation == "ours":
        result["backend"] = resolve_backend("auto")
    if device != "cpu":
        result["device_peak_mb"] = torch.cuda.max_memory_allocated() / 2**20
        result["device_name"] = torch.cuda.get_device_name()
    print(json.dumps(result))


def measure(
    implementation: str, data: Path, labels: Path, timeout: float, device: str = "cpu"
) -> dict:
    """Run one implementation in a fresh process; time-out and OOM become results."""
    command = [
        sys.executable, __file__, "--worker", implementation, str(data), str(labels), device,
    ]  # fmt: skip
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
    if "device_peak_mb" in result:
        text += f", device {result['device_peak_mb'] / 1024:.2f} GB"
    if "backend" in result:
        text += f", backend {result['backend']}"
    if floor is not None and "error" not in floor:
        text += f", {result['seconds'] / floor['seconds']:.2f}× floor wall"
        text += f" / {result['cpu'] / floor['cpu']:.2f}× cpu"
    return text


def peer_ratio(ours: dict, peer: dict, timeout: float) -> str:
    """The peer's wall and CPU time over ours (a lower bound where the peer timed out)."""
    if "seconds" not in ours:
        return "peer ratio: ours did not finish"
    if "seconds" in peer:
        wall, cpu = peer["seconds"] / ours["seconds"], peer["cpu"] / ours["cpu"]
        return f"peer ratio: {wall:.2f}× wall, {cpu:.2f}× cpu (pml time / ours)"
    if peer.get("error", "").startswith("time-out"):
        return f"peer ratio: > {timeout / ours['seconds']:.2f}× wall (pml timed out)"
    return f"peer ratio: pml {peer.get('error', 'did not run')}"


def parse_size(size: str, classes: int) -> tuple[int, int, int]:
    """(count, dim, classes) of ``NxD`` or ``NxD/C``."""
    shape, _, own = size.lower().partition("/")
    count, dim = (int(part) for part in shape.split("x"))
    return count, dim, int(own) if own else classes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default=DEFAULT_SIZES, help="NxD[/C],... (rows of the table), or peer"
    )
    parser.add_argument("--classes", type=int, default=2000)
    parser.add_argument("--implementations", default=",".join(IMPLEMENTATIONS))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda for the GPU row")
    parser.add_argument("--json", default=None, help="also write every result to this file")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    chosen = [name.strip() for name in args.implementations.split(",") if name.strip()]
    known = IMPLEMENTATIONS if args.device == "cpu" else DEVICE_IMPLEMENTATIONS
    if args.device != "cpu" and args.implementations == ",".join(IMPLEMENTATIONS):
        chosen = list(DEVICE_IMPLEMENTATIONS)
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        parser.error(f"unknown implementations {unknown} on {args.device}; known: {list(known)}")
    print(f"machine: {platform.processor() or platform.machine()}, ", end="")
    print(f"{len(__import__('os').sched_getaffinity(0))} cores; classes {args.classes}; ", end="")
    print(f"device {args.device}")
    table: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="eval-scale-") as folder:
        sizes = PEER_SIZES if args.sizes == "peer" else args.sizes
        for size in sizes.split(","):
            count, dim, classes = parse_size(size, args.classes)
            x, y = make_data(count, dim, classes)
            data, labels = Path(folder) / "x.npy", Path(folder) / "y.npy"
            np.save(data, x)
            np.save(labels, y)
            input_gb = x.nbytes / 2**30
            del x
            print(f"\n{count} × {dim}, {classes} classes (input {input_gb:.2f} GB):")
            results: dict[str, dict] = {}
            for name in chosen:  # each line as soon as it is measured
                results[name] = measure(name, data, labels, args.timeout, args.device)
                floor = None if name == "floor" else results.get("floor")
                print(f"  {name:6s} {_cell(results[name], floor)}", flush=True)
            ours, ivf = results.get("ours", {}), results.get("ivf", {})
            if "values" in ours and "values" in ivf:
                exact = ours["values"]["recall@1"]
                approx = ivf["values"]["recall@1_approx"]
                print(f"  IVF Recall@1 {approx:.4f} vs exact {exact:.4f}: {approx - exact:+.4f}")
            if "pml" in results and "ours" in results:
                print("  " + peer_ratio(ours, results["pml"], args.timeout))
            if "values" in ours and "values" in results.get("pml", {}):
                mine, theirs = ours["values"], results["pml"]["values"]
                print(
                    f"  MAP@R ours {mine['map@r']:.4f} / pml {theirs['map@r']:.4f}; "
                    f"NMI ours {mine['nmi']:.4f} / pml {theirs['nmi']:.4f}"
                )
            print("  raw:", json.dumps(results), flush=True)
            row = {"count": count, "dim": dim, "classes": classes, "device": args.device}
            table.append(row | {"results": results})
            if args.json:  # after every row: a time-out later keeps what was measured
                Path(args.json).write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
