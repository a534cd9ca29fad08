"""Periodic evaluation of the model on the test split during training.

Runs at evaluation steps only; the per-step training path never calls it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from sphere_engine.config import RunConfig
from sphere_engine.data.batches import gather_inputs, iter_inputs
from sphere_engine.data.loader_workers import resolve_num_workers
from sphere_engine.evaluation.extras import (
    linear_probe_enabled,
    probe_indices,
    query_mask,
    robustness_due,
    robustness_metrics,
)
from sphere_engine.tracking import Tracker

if TYPE_CHECKING:
    from sphere_engine.metrics.per_query import QueryCollector

ROC_CURVE = "verification/roc"  # tracker curve name: x = FAR, y = TAR


@dataclass(frozen=True)
class Captured:
    """What one evaluation took from the model (host arrays; the model may move on)."""

    embeddings: np.ndarray  # (N, d) float32 test embeddings
    labels: np.ndarray  # (N,) int64
    logits: torch.Tensor | None  # (N, C) float32 on the CPU, for heads
    vertices: np.ndarray | None  # fixed heads' class vertices
    probe: tuple[np.ndarray, np.ndarray] | None  # the linear probe's train embeddings
    robustness: dict[str, float] | None  # computed on the loop's thread (it runs the model)


class Evaluator:
    """Embeds a fixed (seeded) subset of the test split and computes the metrics.

    For classifier heads on the standard split it also reports the head's own
    accuracy, and for fixed polytope heads the angle between each class centroid and
    its vertex. A snapshot of at most ``snapshot_size`` raw test embeddings with labels
    goes to the tracker for the geometry explorer.

    The ``evaluation`` section adds (SCIENCE.md §7): the query–gallery protocol (a
    seeded ``query_fraction`` of the evaluated samples queries the rest; its retrieval
    keys replace the leave-one-out ones), verification metrics and the downsampled ROC
    (tracker curve ``verification/roc``), softmax-output clustering for heads and the
    linear probe on a seeded train-split sample; ``robustness`` attacks at most
    ``max_samples`` of the evaluated samples at the final evaluation (or every one).
    """

    def __init__(
        self, splits: Any, config: RunConfig, device: torch.device, *, final_test: bool = False
    ) -> None:
        self.splits = splits
        self.config = config
        self.device = device
        # the validation classes of a fold (leave-one-out), else the test split; the
        # final test embeds all of the test split with its protocol
        self.dataset = splits.test if final_test else splits.evaluated
        self.final_test = final_test
        on_test = self.dataset is splits.test
        diagnostics = config.diagnostics
        count = len(self.dataset.labels)
        rng = np.random.default_rng(config.training.seed + 104729)
        limit = 0 if final_test else diagnostics.eval_max_samples
        limit = limit or count
        self.indices = np.sort(rng.permutation(count)[: min(limit, count)])
        snapshot_size = 0 if final_test else diagnostics.snapshot_size
        self.snapshot_rows = np.sort(
            rng.permutation(len(self.indices))[: min(snapshot_size, len(self.indices))]
        )
        self.same_classes = config.data.split == "standard"
        # image files are decoded by loader processes, as in training
        self.num_workers = resolve_num_workers(config.data.num_workers, self.dataset)
        evaluation = config.evaluation
        self.is_query = None
        if evaluation.retrieval_protocol == "query_gallery" and on_test:
            official = getattr(self.dataset, "is_query", None)  # In-Shop's own queries
            self.is_query = (
                np.asarray(official)[self.indices]
                if official is not None
                else query_mask(len(self.indices), evaluation.query_fraction, config.training.seed)
            )
        self._thumbnailed = np.zeros(0, dtype=np.int64)  # evaluated rows already drawn
        self.probe_rows = None
        if linear_probe_enabled(config):
            self.probe_rows = probe_indices(
                len(splits.train.labels),
                evaluation.linear_probe_max_samples,
                config.training.seed,
            )

    @torch.no_grad()
    def embed(
        self,
        model: torch.nn.Module,
        batch_size: int | None = None,
        dataset: Any = None,
        indices: np.ndarray | None = None,
    ) -> tuple[torch.Tensor, np.ndarray]:
        """Embeddings and labels of ``dataset`` (the evaluated split) at ``indices`` (the
        evaluated subset)."""
        dataset = self.dataset if dataset is None else dataset
        indices = self.indices if indices is None else indices
        model.eval()
        if batch_size is None:  # each loader worker holds prefetched batches of images
            batch_size = 1024 if self.num_workers == 0 else 128
        batches = iter_inputs(
            dataset, indices, batch_size, num_workers=self.num_workers, device=self.device
        )
        chunks = [model(inputs) for inputs in batches]
        labels = np.asarray(dataset.labels)[indices]
        return torch.cat(chunks), labels

    def evaluate(
        self,
        model: torch.nn.Module,
        objective: Any,
        tracker: Tracker,
        step: int,
        *,
        final: bool = False,
    ) -> dict[str, float]:
        """All evaluation metrics at ``step``; ``final``: the run's last evaluation
        (where robustness runs unless it is asked at every evaluation)."""
        return self.compute(self.capture(model, objective, final=final), tracker, step)

    @torch.no_grad()
    def capture(
        self, model: torch.nn.Module, objective: Any, *, final: bool, attacks: bool = True
    ) -> Captured:
        """Everything an evaluation needs the model for, on the loop's thread: the
        evaluated split's embeddings, the head's logits, the probe's train embeddings,
        robustness (unless ``attacks`` is off)."""
        embeddings, labels = self.embed(model)
        head = getattr(objective, "head", None)
        logits = None if head is None else head(embeddings).float().cpu()
        vertices = None
        if head is not None and getattr(head, "is_fixed", False):
            vertices = head.vertices.detach().cpu().numpy()
        probe = None
        if self.probe_rows is not None:
            train_embeddings, train_labels = self.embed(
                model, dataset=self.splits.train, indices=self.probe_rows
            )
            probe = (train_embeddings.float().cpu().numpy(), train_labels)
        robustness = None
        if attacks and robustness_due(self.config.robustness, final):
            robustness = self._robustness(model, head, labels)
        host = embeddings.float().cpu().numpy()
        return Captured(host, labels, logits, vertices, probe, robustness)

    def compute(self, captured: Captured, tracker: Tracker, step: int) -> dict[str, float]:
        """The metrics of captured embeddings (numpy, faiss or the kNN backend's device:
        any thread), tracked with the snapshot and what the explorer shows."""
        host, labels = captured.embeddings, captured.labels
        metrics = self._retrieval(host, labels, tracker, step)
        metrics |= self._classifier(captured)
        metrics |= self._verification(host, labels, tracker, step)
        metrics |= self._extras(captured)
        tracker.track_eval(metrics, step)
        self._snapshot(host, labels, tracker, step)
        return metrics

    def _retrieval(
        self, host: np.ndarray, labels: np.ndarray, tracker: Tracker, step: int
    ) -> dict[str, float]:
        """Retrieval and clustering metrics; with leave-one-out, each query's results and
        the thumbnails of the rows the explorer and the projector show."""
        from sphere_engine.metrics import evaluate_embeddings, retrieval_protocol_metrics
        from sphere_engine.metrics.per_query import QueryCollector

        seed = self.config.training.seed
        recall_ks = tuple(self.config.diagnostics.recall_ks)
        # leave-one-out keeps per-query results; query–gallery runs only its own search
        leave_one_out = self.is_query is None
        # the final test is its metrics only (no per-query results, thumbnails, snapshot)
        collector = QueryCollector(seed=seed) if leave_one_out and not self.final_test else None
        metrics = evaluate_embeddings(
            host,
            labels,
            ks=recall_ks,
            seed=seed,
            agglomerative=self.config.evaluation.agglomerative,
            retrieval=leave_one_out,
            backend=self.config.evaluation.knn_backend,
            collector=collector,
        )
        if not leave_one_out:
            metrics |= retrieval_protocol_metrics(
                host,
                labels,
                protocol="query_gallery",
                is_query=self.is_query,
                recall_ks=recall_ks,
                backend=self.config.evaluation.knn_backend,
            )
        shown = self._query_results(collector, host, labels, tracker, step)
        if not self.final_test:
            self._thumbnails(shown, tracker)
        return metrics

    def _query_results(
        self,
        collector: QueryCollector | None,
        host: np.ndarray,
        labels: np.ndarray,
        tracker: Tracker,
        step: int,
    ) -> np.ndarray:
        """Track each query's results (when collected); the evaluated rows whose
        thumbnails the pages show: the snapshot's points (the projector's hover) and
        the explorer's strips."""
        from sphere_engine.evaluation.thumbnails import shown_rows
        from sphere_engine.metrics.inputs import check_embeddings, l2_normalize

        if collector is None:
            return self.snapshot_rows
        points = check_embeddings(host)
        unit, norms = l2_normalize(points), np.linalg.norm(points, axis=1)
        results = collector.results(unit, unit, labels, "cosine", norms, norms)
        results.classes["class_name"] = class_names(self.dataset, results.classes["label"])
        tracker.track_query_results(results, step)
        return np.union1d(self.snapshot_rows, shown_rows(results.queries))

    def _classifier(self, captured: Captured) -> dict[str, float]:
        """A head's metrics: softmax-output clustering; on the training classes its
        accuracy and, for a fixed head, each class centroid's angle to its vertex."""
        logits, labels = captured.logits, captured.labels
        metrics: dict[str, float] = {}
        if logits is None:
            return metrics
        if self.config.evaluation.softmax_clustering:
            from sphere_engine.metrics import softmax_clustering_metrics

            metrics |= softmax_clustering_metrics(logits, labels, seed=self.config.training.seed)
        if self.same_classes:
            from sphere_engine.metrics import vertex_alignment

            predictions = logits.argmax(dim=1).numpy()
            metrics["classifier_accuracy"] = float((predictions == labels).mean())
            if captured.vertices is not None:
                metrics |= vertex_alignment(captured.embeddings, labels, captured.vertices)
        return metrics

    def _extras(self, captured: Captured) -> dict[str, float]:
        """The linear probe's accuracy and the robustness curves, when captured."""
        metrics: dict[str, float] = {}
        if captured.probe is not None:
            from sphere_engine.metrics import linear_probe_accuracy

            metrics |= linear_probe_accuracy(*captured.probe, captured.embeddings, captured.labels)
        if captured.robustness is not None:
            metrics |= captured.robustness
        return metrics

    def _snapshot(self, host: np.ndarray, labels: np.ndarray, tracker: Tracker, step: int) -> None:
        """The snapshot of raw test embeddings for the geometry pages (none at the final
        test: its ``snapshot_rows`` are empty)."""
        if not len(self.snapshot_rows):
            return
        rows = self.snapshot_rows
        tracker.track_snapshot(host[rows], original_classes(self.dataset, labels[rows]), step)
        # point i of the snapshot is evaluated row rows[i]
        tracker.track_snapshot_samples(rows, step)

    def _thumbnails(self, rows: np.ndarray, tracker: Tracker) -> None:
        """Thumbnails of the evaluated ``rows`` not sent before (``thumbnails.py``):
        the evaluated set is fixed for the run, so each row is drawn once."""
        from sphere_engine.evaluation.thumbnails import image_shape, to_thumbnails

        shape = image_shape(self.splits.input_shape, getattr(self.splits, "image_shape", None))
        if shape is None or self.splits.pixel_range is None:
            return
        rows = rows[~np.isin(rows, self._thumbnailed)]
        if not rows.size:
            return
        inputs = gather_inputs(self.dataset, self.indices[rows])
        tracker.track_thumbnails(rows, to_thumbnails(inputs, self.splits.pixel_range, shape))
        self._thumbnailed = np.union1d(self._thumbnailed, rows)

    def _verification(
        self, host: np.ndarray, labels: np.ndarray, tracker: Tracker, step: int
    ) -> dict[str, float]:
        evaluation = self.config.evaluation
        if not evaluation.verification:
            return {}
        from sphere_engine.metrics import verification_scores_and_roc

        metrics, (far, tar, _) = verification_scores_and_roc(
            host,
            labels,
            far_targets=tuple(evaluation.far_targets),
            max_genuine_pairs=evaluation.max_genuine_pairs,
            max_impostor_pairs=evaluation.max_impostor_pairs,
            seed=self.config.training.seed,
        )
        tracker.track_curve(ROC_CURVE, far.tolist(), tar.tolist(), step)
        return metrics

    def _robustness(
        self, model: torch.nn.Module, head: Any, labels: np.ndarray
    ) -> dict[str, float]:
        rows = self.indices[: self.config.robustness.max_samples]
        inputs = gather_inputs(self.dataset, rows).to(self.device)
        return robustness_metrics(
            model,
            head if self.same_classes else None,  # accuracy needs the head's own classes
            inputs,
            labels[: len(rows)],
            self.splits.pixel_range,
            self.config.robustness,
            self.config.training.seed,
        )


def original_classes(dataset: Any, labels: np.ndarray) -> np.ndarray:
    """The dataset's own class ids of split-local labels 0..C-1 (a class-disjoint test
    split's classes 5-9 stay 5-9 in the snapshot the Geometry page colours by)."""
    classes = getattr(dataset, "classes", None)
    if (
        classes is None
        or len(classes) == 0
        or not np.issubdtype(np.asarray(classes).dtype, np.integer)
    ):
        return labels
    return np.asarray(classes, dtype=np.int64)[labels]


def class_names(dataset: Any, labels: np.ndarray) -> list[str]:
    """The dataset's own name of each split-local label: an image folder's class names,
    else its original class id (a class-disjoint test split's digit 7 is "7", not "2")."""
    names = getattr(dataset, "class_names", None)
    if names:
        return [str(names[int(label)]) for label in labels]
    return [str(int(c)) for c in original_classes(dataset, np.asarray(labels, dtype=np.int64))]
