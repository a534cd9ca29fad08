"""Periodic evaluation of the model on the test split during training."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from sphere_engine.config import RunConfig
from sphere_engine.tracking import Tracker


def gather_inputs(dataset: Any, indices: np.ndarray) -> torch.Tensor:
    """The inputs of ``dataset`` at ``indices`` as one batch tensor (N × input shape)."""
    if hasattr(dataset, "get_batch"):
        inputs, _ = dataset.get_batch(torch.as_tensor(np.asarray(indices), dtype=torch.long))
        return inputs
    return torch.stack([dataset[int(i)][0] for i in indices])


class Evaluator:
    """Embeds a fixed (seeded) subset of the test split and computes the metrics.

    For classifier heads on the standard split it also reports the head's own
    accuracy, and for fixed polytope heads the angle between each class centroid and
    its vertex. A snapshot of at most ``snapshot_size`` raw test embeddings with labels
    goes to the tracker for the geometry explorer.
    """

    def __init__(self, splits: Any, config: RunConfig, device: torch.device) -> None:
        self.splits = splits
        self.config = config
        self.device = device
        diagnostics = config.diagnostics
        count = len(splits.test.labels)
        rng = np.random.default_rng(config.training.seed + 104729)
        limit = diagnostics.eval_max_samples or count
        self.indices = np.sort(rng.permutation(count)[: min(limit, count)])
        self.snapshot_rows = np.sort(
            rng.permutation(len(self.indices))[: min(diagnostics.snapshot_size, len(self.indices))]
        )
        self.same_classes = config.data.split == "standard"

    @torch.no_grad()
    def embed(
        self, model: torch.nn.Module, batch_size: int = 1024
    ) -> tuple[torch.Tensor, np.ndarray]:
        model.eval()
        chunks = []
        for start in range(0, len(self.indices), batch_size):
            inputs = gather_inputs(self.splits.test, self.indices[start : start + batch_size])
            chunks.append(model(inputs.to(self.device)))
        labels = np.asarray(self.splits.test.labels)[self.indices]
        return torch.cat(chunks), labels

    def evaluate(
        self, model: torch.nn.Module, objective: Any, tracker: Tracker, step: int
    ) -> dict[str, float]:
        from sphere_engine.metrics import evaluate_embeddings, vertex_alignment

        embeddings, labels = self.embed(model)
        metrics = evaluate_embeddings(embeddings, labels, seed=self.config.training.seed)
        head = getattr(objective, "head", None)
        if head is not None and self.same_classes:
            logits = head(embeddings)
            predictions = logits.argmax(dim=1).cpu().numpy()
            metrics["classifier_accuracy"] = float((predictions == labels).mean())
            if getattr(head, "is_fixed", False):
                vertices = head.vertices.detach().cpu().numpy()
                for name, value in vertex_alignment(embeddings, labels, vertices).items():
                    metrics[name if name.startswith("vertex/") else f"vertex/{name}"] = value
        host = embeddings.float().cpu().numpy()
        tracker.track_eval(metrics, step)
        if len(self.snapshot_rows):
            tracker.track_snapshot(host[self.snapshot_rows], labels[self.snapshot_rows], step)
        return metrics
