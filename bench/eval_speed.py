"""Speed and peak memory of SphereScope's evaluation against baselines.

Usage::

    .venv/bin/python bench/eval_speed.py [--suites full,pml,verification,robustness]
        [--cases 10k,60k] [--skip-baseline-60k | --baseline-60k-chunked]
        [--robustness-images 10000]
        [--data-root ../shared/data]

Suites: ``full`` (below: ``evaluate_embeddings`` against scikit-learn), ``pml`` (the
metrics pytorch-metric-learning's ``AccuracyCalculator`` computes, against it; see
``bench/eval_baselines.py``), ``verification`` (``verification_scores`` on 10k
embeddings, all genuine pairs and 10⁶ impostor pairs; target ≤ 1 s), ``robustness``
(PGD-10 time of LeNet++ on MNIST-sized inputs; not in the default list).

Cases: synthetic clustered embeddings (random unit class centres + Gaussian noise,
random norms), 10,000 × 128 with 100 classes and 60,000 × 128 with 10 classes.
Both implementations compute the same metrics (Recall@1/2/4/8, precision@1,
R-precision, MAP@R, 10-NN accuracy, k-means NMI/AMI/pairwise F1, norm statistics,
centroid angles, alignment, centroid energy, uniformity on 4,096 points):

- ``spherescope``: ``sphere_engine.metrics.evaluate_embeddings`` (faiss backend);
- ``sklearn``: ``NearestNeighbors(metric="cosine", algorithm="brute")`` asked for
  R_max + 1 neighbours (queried in chunks of 2,000 so the 60k case fits in memory),
  ``KMeans(n_init=1)``, ``pairwise_distances`` for the pair statistics.

Each (case, implementation) runs in its own subprocess, so the peak resident memory
(``getrusage`` maxrss, which includes the interpreter, libraries and data) is that
run's alone; the time covers the metric computation only, as wall-clock and as
process CPU time (all threads), the latter less sensitive to other load. Targets: 10k in ≤ 2 s and
≥ 3× faster than scikit-learn; 60k with a peak ≤ 3 GB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import eval_baselines  # bench/ is on sys.path: this file runs as a script
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CASES = {"10k": (10_000, 100), "60k": (60_000, 10)}
DIM = 128
KS = (1, 2, 4, 8)
COMPARED = ("recall@1", "map@r", "r_precision", "knn_accuracy", "nmi", "norm/var", "uniformity")


def make_data(count: int, classes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Clustered N × 128 float32 embeddings with norms spread over [0.5, 2]."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(classes, DIM))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = np.repeat(np.arange(classes), count // classes)
    points = centres[labels] + 0.12 * rng.normal(size=(count, DIM))
    points *= rng.uniform(0.5, 2.0, size=(count, 1))
    return points.astype(np.float32), labels


def sklearn_metrics(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """The same metrics, written the straightforward scikit-learn way."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import (
        adjusted_mutual_info_score,
        normalized_mutual_info_score,
        pairwise_distances,
    )
    from sklearn.metrics.cluster import contingency_matrix
    from sklearn.neighbors import NearestNeighbors
    from sklearn.preprocessing import normalize

    unit = normalize(x)
    classes, index, counts = np.unique(y, return_inverse=True, return_counts=True)
    r = counts[index] - 1
    k_max = int(max(r.max(), max(KS), 10))
    search = NearestNeighbors(n_neighbors=k_max + 1, metric="cosine", algorithm="brute").fit(unit)
    hits, p1, rp, ap, knn = {k: 0 for k in KS}, 0.0, 0.0, 0.0, 0.0
    for start in range(0, len(y), 2000):
        rows = np.arange(start, min(start + 2000, len(y)))
        _, neighbours = search.kneighbors(unit[rows])
        own = neighbours == rows[:, None]  # drop the query itself, else the last column
        own[~own.any(axis=1), -1] = True
        neighbours = neighbours[~own].reshape(len(rows), k_max)
        relevant = y[neighbours] == y[rows][:, None]
        for k in KS:
            hits[k] += relevant[:, :k].any(axis=1).sum()
        p1 += relevant[:, 0].sum()
        rr = r[rows]
        rank = np.arange(1, k_max + 1)
        in_r = relevant & (rank <= rr[:, None])
        found = np.cumsum(in_r, axis=1)
        rp += (found[np.arange(len(rows)), rr - 1] / rr).sum()
        ap += ((found / rank * in_r).sum(axis=1) / rr).sum()
        votes = y[neighbours[:, :10]]
        knn += sum(np.bincount(v).argmax() == t for v, t in zip(votes, y[rows], strict=True))
    n = len(y)
    result = {f"recall@{k}": hits[k] / n for k in KS}
    result |= {"precision@1": p1 / n, "r_precision": rp / n, "map@r": ap / n}
    result["knn_accuracy"] = knn / n

    clusters = KMeans(len(classes), n_init=1, random_state=0).fit_predict(unit)
    table = contingency_matrix(y, clusters)
    pairs = lambda c: (c * (c - 1) / 2).sum()  # noqa: E731
    both, same_c, same_l = pairs(table), pairs(table.sum(0)), pairs(table.sum(1))
    precision, recall = both / same_c, both / same_l
    result |= {
        "nmi": normalized_mutual_info_score(y, clusters),
        "ami": adjusted_mutual_info_score(y, clusters),
        "f1": 2 * precision * recall / (precision + recall),
    }

    norms = np.linalg.norm(x.astype(np.float64), axis=1)
    result |= {"norm/mean": norms.mean(), "norm/var": norms.var(), "norm/min": norms.min()}
    result |= {"norm/max": norms.max(), "norm/cv": norms.std() / norms.mean()}
    centroids = normalize(np.stack([unit[y == c].mean(axis=0) for c in classes]))
    angles = np.degrees(np.arccos(np.clip(centroids @ centroids.T, -1, 1)))
    upper = angles[np.triu_indices(len(classes), 1)]
    intra = np.degrees(np.arccos(np.clip((unit * centroids[index]).sum(1), -1, 1))).mean()
    result |= {"angle/inter_min": upper.min(), "angle/inter_mean": upper.mean()}
    result |= {"angle/intra_mean": intra}
    distances = pairwise_distances(centroids)
    result["hyperspherical_energy"] = (1 / distances[np.triu_indices(len(classes), 1)]).mean()
    sums = np.stack([unit[y == c].sum(axis=0) for c in classes])
    within = (2 * counts**2 - 2 * (sums**2).sum(1)).sum()
    result["alignment"] = within / (counts * (counts - 1)).sum()
    sample = np.sort(np.random.default_rng(0).choice(n, min(n, 4096), replace=False))
    sq = pairwise_distances(unit[sample], metric="sqeuclidean")
    result["uniformity"] = np.log(np.exp(-2 * sq[np.triu_indices(len(sample), 1)]).mean())
    return {name: float(value) for name, value in result.items()}


def worker(case: str, implementation: str, cap_gb: float = 0.0) -> None:
    """One measured run; prints a JSON line with seconds, peak MB and some metrics.

    ``cap_gb`` > 0 caps this process's address space (RLIMIT_AS), so that a baseline
    that needs more memory than the machine has fails alone (an "error" line) instead
    of pushing the shared machine into the OOM killer."""
    if cap_gb > 0:
        limit = int(cap_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.path.insert(0, str(ROOT))
    x, y = make_data(*CASES[case])
    compared, diagnostics = COMPARED, None
    if implementation == "spherescope":
        from sphere_engine.metrics import evaluate_embeddings

        compute = lambda: evaluate_embeddings(x, y)  # noqa: E731
    elif implementation == "sklearn":
        compute = lambda: sklearn_metrics(x, y)  # noqa: E731
    else:
        compute, compared, *rest = eval_baselines.IMPLEMENTATIONS[implementation](x, y)
        diagnostics = rest[0] if rest else None
    cpu_start, start = _cpu_seconds(), time.perf_counter()
    try:
        metrics = compute()
    except (MemoryError, RuntimeError) as error:  # torch reports a failed malloc as this
        out_of_memory = isinstance(error, MemoryError) or "alloc" in str(error).lower()
        if cap_gb <= 0 or not out_of_memory:
            raise
        print(json.dumps({
            "error": f"{type(error).__name__}: {str(error).splitlines()[0][:240]}",
            "seconds": time.perf_counter() - start,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "cap_gb": cap_gb,
        }))  # fmt: skip
        return
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu_start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    shown = {name: metrics[name] for name in compared}
    result = {"seconds": seconds, "cpu": cpu, "peak_mb": peak_mb, "metrics": shown}
    if diagnostics is not None:  # untimed, after the peak was read
        result["diagnostics"] = diagnostics()
    print(json.dumps(result))


def _cpu_seconds() -> float:
    """User + system CPU time of this process (all threads): the work, whatever the load."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _meminfo_gb(field: str) -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 2**20  # kB
    raise KeyError(field)


def _available_gb() -> float:
    return _meminfo_gb("MemAvailable")


def _machine_gb() -> float:
    return _meminfo_gb("MemTotal")


def run(case: str, implementation: str, cap_gb: float = 0.0) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", case, implementation, str(cap_gb)],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suites", default="full,pml,verification")
    parser.add_argument("--cases", default="10k,60k")
    parser.add_argument("--skip-baseline-60k", action="store_true")
    parser.add_argument(
        "--baseline-60k-chunked",
        action="store_true",
        help="run the 60k AccuracyCalculator in query chunks straight away (skip the "
        "one-call attempt, which needs more memory than a 24 GB machine has)",
    )
    parser.add_argument("--robustness-images", type=int, default=10_000)
    parser.add_argument("--data-root", default="", help="folder holding MNIST/raw (robustness)")
    parser.add_argument(
        "--baseline-cap-gb",
        type=float,
        default=0.0,
        help="address-space cap of the 60k AccuracyCalculator run (default: available "
        "memory − 1 GB); if one call does not fit, it is rerun in query chunks",
    )
    parser.add_argument("--worker", nargs=3, metavar=("CASE", "IMPLEMENTATION", "CAP_GB"))
    arguments = parser.parse_args()
    if arguments.worker:
        case, implementation, cap_gb = arguments.worker
        worker(case, implementation, float(cap_gb))
        return
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"load average at start: {load} (other processes share the cores)")
    suites = arguments.suites.split(",")
    if "verification" in suites:
        print(eval_baselines.report_verification(run("10k", "verification")))
    if "pml" in suites:
        for case in arguments.cases.split(","):
            ours = run(case, "core")
            if case == "60k" and arguments.skip_baseline_60k:
                print(eval_baselines.report_pml(case, ours, None))
                continue
            cap = arguments.baseline_cap_gb or _available_gb() - 1.0
            if case == "60k" and arguments.baseline_60k_chunked:
                chunks = run(case, "pml-chunked")
                print(eval_baselines.report_pml(case, ours, chunks, chunked=True))
                continue
            theirs, failed = run(case, "pml", cap if case == "60k" else 0.0), None
            if "error" in theirs:
                failed = theirs | {"machine_gb": _machine_gb()}
                theirs = run(case, "pml-chunked")
            print(eval_baselines.report_pml(case, ours, theirs, failed))
    if "robustness" in suites:
        timing = eval_baselines.robustness_seconds(arguments.robustness_images, arguments.data_root)
        per_image = timing["seconds"] / timing["images"]
        line = (
            f"robustness (PGD-10, 3 eps, LeNet++) on {timing['images']:,} "
            f"{'MNIST test' if arguments.data_root else 'random'} images, {timing['device']}: "
            f"{timing['seconds']:.1f} s measured ({1000 * per_image:.1f} ms per image)"
        )
        if timing["images"] < 10_000:
            line += f"; 10,000 images NOT run (linear estimate ~{10_000 * per_image:.0f} s)"
        print(line)
    if "full" not in suites:
        return
    for case in arguments.cases.split(","):
        ours = run(case, "spherescope")
        line = (
            f"{case}: spherescope {ours['seconds']:.2f} s (CPU {ours['cpu']:.2f} s), "
            f"peak {ours['peak_mb']:.0f} MB"
        )
        if case == "60k":
            verdict = "met" if ours["peak_mb"] <= 3 * 1024 else "NOT met"
            line += f" (target peak ≤ 3 GB: {verdict})"
        if case == "60k" and arguments.skip_baseline_60k:
            print(line + "; scikit-learn skipped")
            continue
        theirs = run(case, "sklearn")
        ratio = theirs["seconds"] / ours["seconds"]
        print(
            f"{line} | scikit-learn {theirs['seconds']:.2f} s (CPU {theirs['cpu']:.2f} s), "
            f"peak {theirs['peak_mb']:.0f} MB | speed-up {ratio:.1f}x wall, "
            f"{theirs['cpu'] / ours['cpu']:.1f}x CPU"
        )
        for name in COMPARED:
            print(f"    {name:>14}: {ours['metrics'][name]:.5f} vs {theirs['metrics'][name]:.5f}")
        if case == "10k":
            verdict = ours["seconds"] <= 2.0 and ratio >= 3.0
            print(f"    target ≤ 2 s and ≥ 3x: {'met' if verdict else 'NOT met'}")


if __name__ == "__main__":
    main()
