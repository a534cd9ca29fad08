"""The ``pml`` and ``verification`` suites of ``bench/eval_speed.py``.

``pml``: the metrics pytorch-metric-learning's ``AccuracyCalculator`` computes
(precision@1, R-precision, MAP@R, k-means NMI and AMI), on the same L2-normalised
embeddings (so that its default Euclidean faiss search ranks by cosine):

- ``core``: ``retrieval_metrics`` (faiss, leave-one-out, no R cap) and
  ``clustering_metrics`` (seeded k-means++ then faiss Lloyd to convergence);
- ``pml``: ``AccuracyCalculator(include=..., k="max_bin_count")`` (its documented
  setting for MAP@R: k = the largest class, which every R fits; the default k=None
  fetches all N neighbours, ~7× slower and 6 GB at 10k), faiss kNN and k-means,
  ``get_accuracy(x, y)`` (reference = query).

Retrieval values must agree to 1e-4 (ties aside, both are exact); NMI/AMI come from
different k-means runs (initialisation, iterations), so they agree to 0.02.
Targets: 10k ≥ 1.5× faster; 60k ≥ 3× faster and our peak ≤ 1 GB (the peer needs
~22 GB there: run it only on a machine with the memory).

``verification``: ``verification_scores`` on the 10k case (100 classes of 100: all
495,000 genuine pairs) with 10⁶ impostor pairs; target ≤ 1 s.

``robustness``: ``robustness_accuracy`` with PGD-10 at 3 ε of an (untrained: the time
does not depend on the weights) LeNet++ with a 2-d embedding and a linear head on
MNIST-shaped 1 × 28 × 28 images in [0, 1], on CUDA when available; the number of
images is ``--robustness-images`` (10,000 is the MNIST test split; on a CPU the time
is reported for fewer images and scaled linearly); ``--data-root`` uses the real MNIST
test images (pixels in [0, 1], the model fed normalised inputs) instead of random ones.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

PML_KEYS = {
    "precision@1": "precision_at_1",
    "r_precision": "r_precision",
    "map@r": "mean_average_precision_at_r",
    "nmi": "NMI",
    "ami": "AMI",
}
PML_CHUNK = 10_000
RETRIEVAL_TOLERANCE = 1e-4
CLUSTERING_TOLERANCE = 0.02
Compute = Callable[[], dict[str, float]]


def core(x: np.ndarray, y: np.ndarray) -> tuple[Compute, tuple[str, ...]]:
    from sphere_engine.metrics import clustering_metrics, retrieval_metrics

    def compute() -> dict[str, float]:
        return retrieval_metrics(x, y, ks=(1,)) | clustering_metrics(x, y)

    return compute, tuple(PML_KEYS)


def pml(x: np.ndarray, y: np.ndarray) -> tuple[Compute, tuple[str, ...]]:
    import torch
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

    def compute() -> dict[str, float]:
        unit = torch.nn.functional.normalize(torch.from_numpy(x), dim=1)
        include = tuple(PML_KEYS.values())
        calculator = AccuracyCalculator(
            include=include, k="max_bin_count", device=torch.device("cpu")
        )
        values = calculator.get_accuracy(unit, torch.from_numpy(y))
        return {ours: float(values[theirs]) for ours, theirs in PML_KEYS.items()}

    return compute, tuple(PML_KEYS)


def pml_chunked(x: np.ndarray, y: np.ndarray) -> tuple[Compute, tuple[str, ...]]:
    """AccuracyCalculator where one call does not fit in memory: queries in chunks of
    ``PML_CHUNK`` against all embeddings (its documented ``ref_includes_query``, which
    wants the queries first in the reference: the reference is rotated to put them
    there), the per-query means weighted by chunk size; NMI/AMI from one call on all."""
    import torch
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

    retrieval_keys = ("precision@1", "r_precision", "map@r")

    def compute() -> dict[str, float]:
        unit = torch.nn.functional.normalize(torch.from_numpy(x), dim=1)
        labels = torch.from_numpy(y)
        device = torch.device("cpu")
        include = tuple(PML_KEYS[name] for name in retrieval_keys)
        calculator = AccuracyCalculator(include=include, k="max_bin_count", device=device)
        totals = dict.fromkeys(retrieval_keys, 0.0)
        for start in range(0, len(y), PML_CHUNK):
            reference = torch.roll(unit, -start, dims=0)
            reference_labels = torch.roll(labels, -start, dims=0)
            size = min(PML_CHUNK, len(y) - start)
            values = calculator.get_accuracy(
                reference[:size], reference_labels[:size], reference, reference_labels, True
            )
            for name in retrieval_keys:
                totals[name] += float(values[PML_KEYS[name]]) * size
        result = {name: total / len(y) for name, total in totals.items()}
        clustering = AccuracyCalculator(include=("NMI", "AMI"), device=device)
        values = clustering.get_accuracy(unit, labels)
        return result | {"nmi": float(values["NMI"]), "ami": float(values["AMI"])}

    return compute, tuple(PML_KEYS)


def verification(x: np.ndarray, y: np.ndarray) -> tuple[Compute, tuple[str, ...]]:
    from sphere_engine.metrics import verification_scores

    def compute() -> dict[str, float]:
        return verification_scores(x, y, max_impostor_pairs=1_000_000)

    keys = ("verification/auc", "verification/eer", "verification/tar@far=1e-4")
    return compute, (*keys, "verification/genuine_pairs", "verification/impostor_pairs")


def robustness_seconds(images: int, data_root: str = "") -> dict[str, float]:
    """Wall seconds of PGD-10 at 3 ε on ``images`` MNIST-shaped inputs (see module doc).

    With ``data_root`` (the folder holding ``MNIST/raw``), the first ``images`` of the
    real MNIST test split, attacked in pixel space through the model's normalisation
    exactly as a training run's evaluation does (``evaluation_extras.PixelModel``).
    """
    import time

    import torch

    from sphere_engine.models.lenet_pp import LeNetPP
    from sphere_engine.robustness import robustness_accuracy

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = LeNetPP((1, 28, 28), 2).to(device)
    head = torch.nn.Linear(2, 10).to(device)
    if data_root:
        from sphere_engine.data import create_dataset
        from sphere_engine.evaluation_extras import PixelModel

        splits = create_dataset("mnist", root=data_root, split="standard")
        assert splits.pixel_range is not None
        normalised, labels = splits.test.get_batch(torch.arange(images))
        inputs = splits.pixel_range.to_pixels(normalised).to(device)
        labels = labels.to(device)
        model = PixelModel(model, splits.pixel_range)
    else:
        inputs = torch.rand(images, 1, 28, 28, device=device)
        labels = torch.randint(0, 10, (images,), device=device)
    start = time.perf_counter()
    robustness_accuracy(
        model, head, inputs, labels, epsilons=(0.1, 0.2, 0.3), attacks=("pgd",), steps=10
    )
    if device == "cuda":
        torch.cuda.synchronize()
    return {"seconds": time.perf_counter() - start, "images": images, "device": device}


IMPLEMENTATIONS = {
    "core": core,
    "pml": pml,
    "pml-chunked": pml_chunked,
    "verification": verification,
}


def report_pml(
    case: str,
    ours: dict,
    theirs: dict | None,
    failed_single_call: dict | None = None,
    chunked: bool = False,
) -> str:
    """Lines comparing one case: times, peaks, ratio, targets, value agreement.

    ``failed_single_call``: the one-call AccuracyCalculator run that died under its
    memory cap (then ``theirs`` is the chunked run, said so in the line); ``chunked``:
    ``theirs`` is the chunked run, asked for directly."""
    line = (
        f"pml suite {case}: spherescope {ours['seconds']:.2f} s (CPU {ours['cpu']:.2f} s), "
        f"peak {ours['peak_mb']:.0f} MB"
    )
    lines = []
    if failed_single_call is not None:
        lines.append(
            f"    AccuracyCalculator in one call did NOT fit: {failed_single_call['error']} "
            f"after {failed_single_call['seconds']:.0f} s at peak RSS "
            f"{failed_single_call['peak_mb']:.0f} MB under an address-space cap of "
            f"{failed_single_call['cap_gb']:.1f} GB (this machine: "
            f"{failed_single_call['machine_gb']:.1f} GB RAM, no swap)"
        )
    if theirs is None:
        return "\n".join([line + "; AccuracyCalculator skipped", *lines])
    name = (
        "AccuracyCalculator"
        if failed_single_call is None and not chunked
        else (f"AccuracyCalculator in query chunks of {PML_CHUNK:,}")
    )
    ratio = theirs["seconds"] / ours["seconds"]
    lines.insert(
        0,
        f"{line} | {name} {theirs['seconds']:.2f} s (CPU {theirs['cpu']:.2f} s), "
        f"peak {theirs['peak_mb']:.0f} MB | speed-up {ratio:.2f}x wall, "
        f"{theirs['cpu'] / ours['cpu']:.2f}x CPU",
    )
    agree = True
    for name in PML_KEYS:
        a, b = ours["metrics"][name], theirs["metrics"][name]
        tolerance = CLUSTERING_TOLERANCE if name in ("nmi", "ami") else RETRIEVAL_TOLERANCE
        ok = abs(a - b) <= tolerance
        agree &= ok
        lines.append(f"    {name:>12}: {a:.5f} vs {b:.5f} {'agree' if ok else 'DIFFER'}")
    if case == "10k":
        met = ratio >= 1.5 and agree
        lines.append(f"    target ≥ 1.5x and values agree: {'met' if met else 'NOT met'}")
    if case == "60k":
        met = ratio >= 3.0 and ours["peak_mb"] <= 1024 and agree
        lines.append(f"    target ≥ 3x, peak ≤ 1 GB, values agree: {'met' if met else 'NOT met'}")
    return "\n".join(lines)


def report_verification(ours: dict) -> str:
    values = ", ".join(f"{name} {value:.4g}" for name, value in ours["metrics"].items())
    wall = "met" if ours["seconds"] <= 1.0 else "NOT met"
    cpu = "met" if ours["cpu"] <= 1.0 else "NOT met"
    return (
        f"verification 10k (all genuine, 10^6 impostor pairs): {ours['seconds']:.2f} s "
        f"(CPU {ours['cpu']:.2f} s), peak {ours['peak_mb']:.0f} MB (target ≤ 1 s: wall "
        f"{wall}, CPU {cpu}; wall is inflated when other processes share the cores)"
        f"\n    {values}"
    )
