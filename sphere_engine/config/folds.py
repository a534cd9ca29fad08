"""Validation folds and early stopping in the run config: the cross-field rules (pure,
cheap) and the fold rule itself (standard library only, so the study coordinator and the
dashboard read a run's classes without torch).

The fold rule (SCIENCE.md §9): the sorted training class ids (C of them) are cut into
``folds`` contiguous chunks at ⌊j·C/k⌋; fold i validates on chunk (i − 1) mod k and
trains on the other classes, a contiguous range that starts at chunk i and wraps past
the last class. This is the numbering of "A Metric Learning Reality Check" (its fold 0
validates on the last quarter); unlike its fixed-length windows, the chunks cover every
training class when k does not divide C. ``sphere_engine.data.folds.fold_splits`` applies
it to a dataset; the rule needing the dataset (no more folds than training classes) runs
in ``validate`` through ``fold_info``.
"""

from __future__ import annotations

from collections.abc import Iterable

from sphere_engine.catalogue.facts import FINAL_TEST_PREFIX
from sphere_engine.catalogue.lookup import find
from sphere_engine.catalogue.metric import Source
from sphere_engine.config.config_error import ConfigError
from sphere_engine.config.data_section import DataConfig


def check_folds_and_early_stop(data: DataConfig, early_stop_metric: str) -> None:
    """``data.folds`` is 0 or at least 2 and needs the class-disjoint split; ``data.fold``
    names one of them; ``training.early_stop_metric`` is an evaluation metric with a
    direction."""
    if data.folds == 1:
        raise ConfigError("data.folds", "1 is not allowed: 0 (no validation folds) or at least 2")
    if data.folds and data.split != "class_disjoint":
        raise ConfigError(
            "data.folds",
            "validation folds need data.split = 'class_disjoint' (a fold holds classes out "
            f"of training); data.split is {data.split!r}",
            related=["data.split"],
        )
    if data.fold and data.fold >= data.folds:
        allowed = f"0..{data.folds - 1}" if data.folds else "0 without data.folds"
        raise ConfigError(
            "data.fold",
            f"{data.fold} is not a fold of data.folds = {data.folds} (allowed: {allowed})",
            related=["data.folds"],
        )
    metric = early_stop_metric
    entry = find(metric, Source.EVALUATION)
    if entry is None or entry.higher_is_better is None or metric.startswith(FINAL_TEST_PREFIX):
        raise ConfigError(
            "training.early_stop_metric",
            f"{metric!r} is not an evaluation metric with a better direction "
            "(e.g. 'map@r', 'precision@1', 'r_precision', 'recall@1')",
        )


def check_folds(folds: int, num_train_classes: int) -> None:
    """``ConfigError`` on ``data.folds`` when there are more folds than training classes."""
    if folds > num_train_classes:
        raise ConfigError(
            "data.folds",
            f"{folds} folds but the training split has only {num_train_classes} classes "
            "(each fold needs at least one validation class)",
        )


def fold_classes(classes: Iterable[int], folds: int, fold: int) -> tuple[list[int], list[int]]:
    """(training classes, validation classes) of ``fold`` of ``folds`` over ``classes``
    (any order; sorted here). The training classes are listed in their wrapping order."""
    ordered = sorted({int(c) for c in classes})
    check_folds(folds, len(ordered))
    if not 0 <= fold < folds:
        raise ConfigError("data.fold", f"{fold} is not a fold of data.folds = {folds}")
    bounds = [(j * len(ordered)) // folds for j in range(folds + 1)]
    chunk = (fold - 1) % folds
    validation = ordered[bounds[chunk] : bounds[chunk + 1]]
    held_out = set(validation)
    rotated = ordered[bounds[fold] :] + ordered[: bounds[fold]]
    return [c for c in rotated if c not in held_out], validation


def class_ranges(classes: Iterable[int]) -> list[list[int]]:
    """Class ids as inclusive ranges of consecutive ids, ``[[first, last], ...]`` (a run's
    recorded class lists stay a few pairs for SOP's 11k classes)."""
    ranges: list[list[int]] = []
    for c in sorted({int(c) for c in classes}):
        if ranges and c == ranges[-1][1] + 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return ranges


def expand_class_ranges(ranges: Iterable[Iterable[int]]) -> list[int]:
    """The class ids of ``class_ranges``'s pairs, ascending."""
    return [c for first, last in ranges for c in range(first, last + 1)]
