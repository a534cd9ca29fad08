"""Questions the dashboard, the store readers and the CLI ask the catalogue."""

from __future__ import annotations

from collections.abc import Iterable

from sphere_engine.catalogue.entries import CHART_GROUPS, KEY_EVALUATIONS, MAIN_METRICS, METRICS
from sphere_engine.catalogue.metric import ChartGroup, Metric, Source, column_key


def find(key: str, source: Source | None = None) -> Metric | None:
    """The catalogue entry of a logged key (an exact key before a family), or None.

    With ``source``, only entries logged from that source match.
    """
    candidates = [m for m in METRICS if source is None or source in m.sources]
    exact = next((m for m in candidates if not m.is_family and m.key == key), None)
    return exact or next((m for m in candidates if m.is_family and m.matches(key)), None)


def label(key: str, source: Source) -> str:
    """A readable, source-qualified title: "norm variance (test set)"; the key if unknown."""
    metric = find(key, source)
    return metric.label(source) if metric else key


def header(key: str, source: Source) -> str:
    """A short table header: "R@1", "norm var (training batch)"; the key if unknown."""
    metric = find(key, source)
    return metric.header(source) if metric else key


def group_keys(group: ChartGroup, logged: list[str] | set[str]) -> list[str]:
    """The logged training-step keys drawn in ``group`` (its members, then ``also``), in
    catalogue order for exact keys and sorted within a family."""
    keys: list[str] = []
    for metric in METRICS:
        if metric.group != group.id or Source.TRAINING_BATCH not in metric.sources:
            continue
        members = sorted(k for k in logged if find(k, Source.TRAINING_BATCH) is metric)
        keys += [k for k in members if k not in keys]
    return keys + [k for k in group.also if k in logged and k not in keys]


def chart_groups() -> tuple[ChartGroup, ...]:
    return CHART_GROUPS


def key_metrics() -> tuple[str, ...]:
    """Evaluation keys to print first (CLI) and chart by default (Run page), in order."""
    return KEY_EVALUATIONS


def qualified_columns(pairs: tuple[tuple[Source, str], ...]) -> list[str]:
    """Column keys ("eval:recall@1") of (source, key) pairs."""
    return [column_key(source, key) for source, key in pairs]


def main_metric(logged: Iterable[str]) -> str | None:
    """The run's main metric among its logged evaluation keys: the first of
    ``MAIN_METRICS`` it logged (None when it logged none of them)."""
    present = set(logged)
    return next((key for key in MAIN_METRICS if key in present), None)
