"""Facts more than one package states, declared once (torch-free, beside the metric
catalogue): the dashboard, the store's readers, the config and the engine import them
from here."""

from __future__ import annotations

import typing
from typing import Literal

#: Recall@K's K when nothing else is asked (the SEC / metric-learning papers' 1, 2, 4, 8).
DEFAULT_RECALL_KS: tuple[int, ...] = (1, 2, 4, 8)

#: The neighbour-search / k-means backends (``sphere_engine.metrics.backend``); ``auto``
#: picks the first usable of faiss-gpu, torch-cuda, faiss, torch.
KnnBackend = Literal["auto", "faiss-gpu", "torch-cuda", "faiss", "torch"]
KNN_BACKENDS: tuple[str, ...] = typing.get_args(KnnBackend)

#: The L∞ attacks of the robustness evaluation.
Attack = Literal["fgsm", "pgd"]
ATTACKS: tuple[str, ...] = typing.get_args(Attack)
#: ε of the robustness evaluation in pixel units (inputs in [0, 1]); 0 is the clean score.
DEFAULT_EPSILONS: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2)

#: How a dataset's classes are divided between training and test (SCIENCE.md §1).
Split = Literal["class_disjoint", "standard"]
SPLITS: tuple[str, ...] = typing.get_args(Split)

#: The optimisers ``optimizer.name`` accepts.
OptimizerName = Literal["sgd", "adam", "adamw", "rmsprop"]
OPTIMIZERS: tuple[str, ...] = typing.get_args(OptimizerName)


#: Keys of a run's one evaluation on the test split after validation folds
#: (``evaluation.final_test``) start with this: ``test/map@r``.
FINAL_TEST_PREFIX = "test/"


def checkpoint_file_name(step: int) -> str:
    """The file a checkpoint of ``step`` is written to (names sort by step)."""
    return f"step_{step:08d}.pt"


#: The retrieval explorer lists this many worst queries in each of these orders (columns
#: of the per-query results, ascending, ties by query id); the evaluation writes the
#: thumbnails of those queries and of their neighbours, so the strips it shows have images.
WORST_QUERIES = 10
WORST_QUERY_ORDERS: dict[str, tuple[str, str]] = {
    "R@1 (a miss first)": ("hit@1", "ap@r"),
    "AP@R": ("ap@r", "hit@1"),
}
