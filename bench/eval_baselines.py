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

Retrieval values must agree to 1e-4 (ties aside, both are exact). NMI and AMI are
the same functions on both sides (scikit-learn's, arithmetic normalisation) applied
to different k-means runs of the same objective: ours from k-means++ (seed 0) on all
points to convergence, the peer's ``FaissKMeans(niter=20)`` (what AccuracyCalculator
builds by default: ``faiss.Kmeans(d, k, niter=20)``, so faiss's defaults for the rest:
random initial centres drawn with seed 1234, ``nredo=1``, 20 Lloyd iterations trained
on a subsample of 256 points per centroid, then every point assigned). They agree to
0.02 when both runs reach the same clustering. Where they do not, untimed diagnostics
(after the peak was read) show why, and the agreement check says which case holds:

- each clustering's k-means objective (the sum of squared distances of the unit
  embeddings to their cluster's mean, computed the same way for both);
- the definitions cross-checked on the same clusters both ways: the peer's
  ``calculate_NMI/AMI`` on our clusters, our ``nmi``/``ami`` on the peer's;
- the peer's own k-means rerun with faiss seeds ``PEER_SEEDS`` (its default first):
  objective and NMI/AMI of each, so that where one of its runs reaches our objective,
  its NMI/AMI can be compared with ours on that same optimum.
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
from typing import Any

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
DEFINITION_TOLERANCE = 1e-12  # the same functions on the same clusters
SAME_OPTIMUM = 1e-6  # relative objective difference under which two runs are one optimum
PEER_SEEDS = (1234, 1, 2, 3, 4, 5, 6, 7)  # faiss's default seed (the peer's run) first
TARGETS = {"10k": (1.5, None), "60k": (3.0, 1024)}  # speed-up over the peer, our peak MB
Compute = Callable[[], dict[str, float]]
# Untimed diagnostics, run after the measured call: k-means objective and cross-checks.
Diagnostics = Callable[[], dict[str, Any]]


def kmeans_objective(x: np.ndarray, clusters: np.ndarray) -> float:
    """Σ ‖u − mean of u's cluster‖² over the L2-normalised rows u (float64)."""
    unit = x.astype(np.float64)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    _, index = np.unique(clusters, return_inverse=True)
    sums = np.zeros((index.max() + 1, unit.shape[1]))
    np.add.at(sums, index, unit)
    counts = np.bincount(index)
    # Σ‖u‖² − Σ_c ‖Σ_{u∈c} u‖² / n_c, the within-cluster sum of squares.
    return float((unit * unit).sum() - ((sums * sums).sum(axis=1) / counts).sum())


def core(x: np.ndarray, y: np.ndarray) -> tuple[Compute, tuple[str, ...], Diagnostics]:
    from sphere_engine.metrics import clustering_metrics, retrieval_metrics

    def compute() -> dict[str, float]:
        return retrieval_metrics(x, y, ks=(1,)) | clustering_metrics(x, y)

    def diagnostics() -> dict[str, Any]:
        """Our clusters again (seeded: the same ones), their objective, and the peer's
        own NMI/AMI functions applied to them (same definitions, same numbers)."""
        from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

        from sphere_engine.metrics.inputs import l2_normalize
        from sphere_engine.metrics.kmeans import kmeans_labels

        clusters = kmeans_labels(l2_normalize(x), np.unique(y).size, seed=0)
        calculator = AccuracyCalculator(include=("NMI", "AMI"))
        return {
            "kmeans_objective": kmeans_objective(x, clusters),
            "peer_nmi_of_our_clusters": float(calculator.calculate_NMI(y, clusters)),
            "peer_ami_of_our_clusters": float(calculator.calculate_AMI(y, clusters)),
        }

    return compute, tuple(PML_KEYS), diagnostics


class _RecordingKMeans:
    """AccuracyCalculator's default k-means (``FaissKMeans(niter=20)``, what it builds
    when ``kmeans_func`` is None), keeping the cluster ids it returns."""

    def __init__(self) -> None:
        from pytorch_metric_learning.utils.inference import FaissKMeans

        self.kmeans = FaissKMeans(niter=20, gpu=False)
        self.clusters: np.ndarray | None = None

    def __call__(self, x, num_clusters):  # the peer's kmeans_func signature
        clusters = self.kmeans(x, num_clusters)
        self.clusters = clusters.cpu().numpy()
        return clusters


def _peer_diagnostics(x: np.ndarray, y: np.ndarray, recorder: _RecordingKMeans) -> Diagnostics:
    def diagnostics() -> dict[str, Any]:
        """The peer's clusters' objective, our NMI/AMI functions on them, and its own
        k-means rerun with other faiss seeds (``PEER_SEEDS``)."""
        import torch
        from pytorch_metric_learning.utils.inference import FaissKMeans

        from sphere_engine.metrics.clustering import ami, nmi

        assert recorder.clusters is not None
        unit = torch.nn.functional.normalize(torch.from_numpy(x), dim=1)  # as measured
        num_clusters = int(np.unique(y).size)
        seeds = []
        for seed in PEER_SEEDS:
            clusters = FaissKMeans(niter=20, gpu=False, seed=seed)(unit, num_clusters).numpy()
            seeds.append([seed, kmeans_objective(x, clusters), nmi(y, clusters), ami(y, clusters)])
        return {
            "kmeans_objective": kmeans_objective(x, recorder.clusters),
            "our_nmi_of_peer_clusters": nmi(y, recorder.clusters),
            "our_ami_of_peer_clusters": ami(y, recorder.clusters),
            "seeds": seeds,  # [faiss seed, objective, NMI, AMI]
        }

    return diagnostics


def pml(x: np.ndarray, y: np.ndarray) -> tuple[Compute, tuple[str, ...], Diagnostics]:
    import torch
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

    recorder = _RecordingKMeans()

    def compute() -> dict[str, float]:
        unit = torch.nn.functional.normalize(torch.from_numpy(x), dim=1)
        include = tuple(PML_KEYS.values())
        calculator = AccuracyCalculator(
            include=include, k="max_bin_count", device=torch.device("cpu"), kmeans_func=recorder
        )
        values = calculator.get_accuracy(unit, torch.from_numpy(y))
        return {ours: float(values[theirs]) for ours, theirs in PML_KEYS.items()}

    return compute, tuple(PML_KEYS), _peer_diagnostics(x, y, recorder)


def pml_chunked(x: np.ndarray, y: np.ndarray) -> tuple[Compute, tuple[str, ...], Diagnostics]:
    """AccuracyCalculator where one call does not fit in memory: queries in chunks of
    ``PML_CHUNK`` against all embeddings (its documented ``ref_includes_query``, which
    wants the queries first in the reference: the reference is rotated to put them
    there), the per-query means weighted by chunk size; NMI/AMI from one call on all."""
    import torch
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

    retrieval_keys = ("precision@1", "r_precision", "map@r")
    recorder = _RecordingKMeans()

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
        clustering = AccuracyCalculator(include=("NMI", "AMI"), device=device, kmeans_func=recorder)
        values = clustering.get_accuracy(unit, labels)
        return result | {"nmi": float(values["NMI"]), "ami": float(values["AMI"])}

    return compute, tuple(PML_KEYS), _peer_diagnostics(x, y, recorder)


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
    exactly as a training run's evaluation does (``sphere_engine.evaluation.extras.PixelModel``).
    """
    import time

    import torch

    from sphere_engine.models.lenet_pp import LeNetPP
    from sphere_engine.robustness import AttackSettings, robustness_accuracy

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = LeNetPP((1, 28, 28), 2).to(device)
    head = torch.nn.Linear(2, 10).to(device)
    if data_root:
        from sphere_engine.data import create_dataset
        from sphere_engine.evaluation.extras import PixelModel

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
    settings = AttackSettings(epsilons=(0.1, 0.2, 0.3), attacks=("pgd",), steps=10)
    robustness_accuracy(model, head, inputs, labels, settings)
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
    retrieval_agree, clustering_agree = True, True
    for name in PML_KEYS:
        a, b = ours["metrics"][name], theirs["metrics"][name]
        clustering = name in ("nmi", "ami")
        ok = abs(a - b) <= (CLUSTERING_TOLERANCE if clustering else RETRIEVAL_TOLERANCE)
        if clustering:
            clustering_agree &= ok
        else:
            retrieval_agree &= ok
        lines.append(f"    {name:>12}: {a:.5f} vs {b:.5f} {'agree' if ok else 'DIFFER'}")
    clustering_check, clustering_ok, explanation = _clustering_check(ours, theirs, clustering_agree)
    lines += explanation
    if case not in TARGETS:
        return "\n".join(lines)
    ratio_target, peak_target_mb = TARGETS[case]
    checks = {f"≥ {ratio_target:g}x": ratio >= ratio_target}
    if peak_target_mb is not None:
        checks[f"peak ≤ {peak_target_mb / 1024:g} GB"] = ours["peak_mb"] <= peak_target_mb
    checks["retrieval values agree"] = retrieval_agree
    checks[clustering_check] = clustering_ok
    status = "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in checks.items())
    lines.append(f"    target {'met' if all(checks.values()) else 'NOT met'} ({status})")
    return "\n".join(lines)


def _clustering_check(ours: dict, theirs: dict, agree: bool) -> tuple[str, bool, list[str]]:
    """(what the NMI/AMI check checks, whether it holds, the lines that show it).

    Values within ``CLUSTERING_TOLERANCE``: that is the check. Otherwise the values
    come from different clusterings, and the check is that they are the same metric
    on the same clustering, and ours the better clustering: (1) each side's NMI/AMI
    functions give the other's numbers on the other's clusters; (2) our k-means
    objective is not above the peer's; (3) the peer's own k-means, rerun with other
    faiss seeds, reaches our objective in some run, and gives our NMI/AMI there.
    """
    if agree:
        return f"NMI/AMI values agree (≤ {CLUSTERING_TOLERANCE:g})", True, []
    name = (
        "NMI/AMI: same on the same clustering (definitions cross-checked, the peer's "
        "runs reaching our k-means optimum give our values), the peer's value its "
        "worse optimum"
    )
    mine, peer = ours.get("diagnostics", {}), theirs.get("diagnostics", {})
    if "kmeans_objective" not in mine or "seeds" not in peer:
        return name, False, ["    NMI/AMI differ and no k-means diagnostics were recorded."]
    metrics = ("nmi", "ami")
    peer_on_ours = [mine[f"peer_{m}_of_our_clusters"] for m in metrics]
    ours_on_peer = [peer[f"our_{m}_of_peer_clusters"] for m in metrics]
    definitions = all(
        abs(theirs_fn - ours["metrics"][m]) <= DEFINITION_TOLERANCE
        and abs(ours_fn - theirs["metrics"][m]) <= DEFINITION_TOLERANCE
        for m, theirs_fn, ours_fn in zip(metrics, peer_on_ours, ours_on_peer, strict=True)
    )
    a, b = mine["kmeans_objective"], peer["kmeans_objective"]
    better = a <= b * (1 + SAME_OPTIMUM)
    runs = peer["seeds"]  # [seed, objective, NMI, AMI], the peer's default seed first
    reaching = [run for run in runs if abs(run[1] - a) <= SAME_OPTIMUM * a]
    mine_nmi, mine_ami = ours["metrics"]["nmi"], ours["metrics"]["ami"]
    same_values = bool(reaching) and all(
        abs(run[2] - mine_nmi) <= 1e-6 and abs(run[3] - mine_ami) <= 1e-6 for run in reaching
    )
    verdict = (
        "the peer's k-means stopped in a worse local optimum of the same objective"
        if b > a * (1 + SAME_OPTIMUM)
        else "ours is not the better clustering: the difference is ours to explain"
    )
    per_seed = ", ".join(
        f"{seed}{' (default)' if i == 0 else ''} {objective:.2f} ({run_nmi:.5f} / {run_ami:.5f})"
        for i, (seed, objective, run_nmi, run_ami) in enumerate(runs)
    )
    rerun = abs(runs[0][1] - b) <= SAME_OPTIMUM * b
    lines = [
        f"    NMI/AMI differ: k-means objective (within-cluster sum of squares on the unit "
        f"embeddings) ours {a:.2f} vs peer {b:.2f} ({100 * (b - a) / a:+.2f} %): {verdict}.",
        f"    Same definitions on the same clusters: the peer's calculate_NMI/AMI on our "
        f"clusters {peer_on_ours[0]:.5f} / {peer_on_ours[1]:.5f}, our nmi/ami on the peer's "
        f"{ours_on_peer[0]:.5f} / {ours_on_peer[1]:.5f} ("
        + ("each the other side's numbers" if definitions else "NOT the same: definitions differ")
        + ").",
        "    The peer's own k-means (FaissKMeans(niter=20) = faiss.Kmeans: random initial "
        "centres, nredo=1, 20 iterations on 256 points per centroid) by faiss seed, "
        f"objective (NMI / AMI): {per_seed}"
        + ("" if rerun else " [the default seed's rerun did NOT reproduce the measured run]"),
        f"    {len(reaching)} of {len(runs)} of its runs reach our objective"
        + (
            f", all with our NMI/AMI ({mine_nmi:.5f} / {mine_ami:.5f})"
            if same_values
            else (": NOT with our NMI/AMI" if reaching else "")
        )
        + "; ours: k-means++ (seed 0), all points, Lloyd to convergence.",
    ]
    return name, definitions and better and same_values, lines


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
