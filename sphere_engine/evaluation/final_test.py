"""The final test of a run (``evaluation.final_test``): one evaluation of all of the
test split after the last step, with the run's test protocol.

Its metrics are tracked at the run's last step with every key prefixed
``FINAL_TEST_PREFIX`` (``test/map@r``), apart from the periodic evaluation's (the
validation classes with folds); nothing else of it is tracked (no snapshot, per-query
results or curves, which belong to the periodic evaluation). Its embeddings go to
``TEST_EMBEDDINGS_FILE`` in the run's checkpoint folder for the study's concatenated
evaluation (``concatenated.py``): ``embeddings`` (N, d) float32 as the model gives them,
``labels`` (N,) original class ids, ``ids`` (N,) the sample's row in the test split,
``is_query`` (N,) (the query–gallery protocol's queries; all False otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sphere_engine.catalogue.facts import FINAL_TEST_PREFIX
from sphere_engine.evaluation.evaluator import Evaluator, original_classes
from sphere_engine.tracking import BaseTracker, Tracker

TEST_EMBEDDINGS_FILE = "test_embeddings.npz"


class _TestKeys(BaseTracker):
    """Passes an evaluation's metrics on with the final test's prefix, and nothing else."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def track_eval(self, metrics: Mapping[str, float], step: int) -> None:
        self.tracker.track_eval({FINAL_TEST_PREFIX + k: v for k, v in metrics.items()}, step)


def run_final_test(
    evaluator: Evaluator,
    model: torch.nn.Module,
    objective: Any,
    tracker: Tracker,
    step: int,
    folder: str,
) -> dict[str, float]:
    """Evaluate ``model`` once on the test split (``evaluator`` built with
    ``final_test=True``), track the prefixed metrics at ``step``, save the embeddings in
    ``folder`` ("" = none) and record both in the run info. Returns the metrics."""
    captured = evaluator.capture(model, objective, final=False, attacks=False)
    metrics = evaluator.compute(captured, _TestKeys(tracker), step)
    info: dict[str, Any] = {"final_test_step": step}
    if folder:
        path = Path(folder) / TEST_EMBEDDINGS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        is_query = evaluator.is_query
        save_embeddings(
            path,
            captured.embeddings,
            original_classes(evaluator.dataset, captured.labels),
            evaluator.indices,
            np.zeros(len(captured.labels), bool) if is_query is None else is_query,
        )
        info["test_embeddings"] = str(path.resolve())
    tracker.track_run_info(info)
    return {FINAL_TEST_PREFIX + k: v for k, v in metrics.items()}


def save_embeddings(
    path: Path, embeddings: np.ndarray, labels: np.ndarray, ids: np.ndarray, is_query: np.ndarray
) -> None:
    """Write the npz atomically (a reader never sees half a file)."""
    partial = path.with_name(path.name + ".partial.npz")
    np.savez(
        partial,
        embeddings=np.asarray(embeddings, dtype=np.float32),
        labels=np.asarray(labels, dtype=np.int64),
        ids=np.asarray(ids, dtype=np.int64),
        is_query=np.asarray(is_query, dtype=bool),
    )
    partial.replace(path)
