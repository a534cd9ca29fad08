"""Rank 0's part of ``Run.evaluate``: the metrics computed here, the results written."""

from __future__ import annotations

from typing import Any

from spherescope._outbox import Outbox


def record_evaluation(
    outbox: Outbox,
    embeddings: Any,
    labels: Any,
    step: int,
    sample_ids: Any = None,
    **options: Any,
) -> dict[str, float]:
    """Evaluate the gathered held-out embeddings as a training run's evaluation does
    (``options``: ``evaluate_external``'s), post the metrics, each query's neighbours
    (leave-one-out) and the snapshot to ``outbox``; returns the metrics."""
    from sphere_engine.evaluation.external import (
        evaluate_external,
        external_query_results,
        sample_id_array,
        snapshot_rows,
    )
    from sphere_engine.metrics.per_query import QueryCollector

    outbox.deliver(finish=True)  # the diagnostics before the evaluation
    # leave-one-out keeps each query's neighbours for the explorer, by sample id
    collector = QueryCollector() if options.get("reference") is None else None
    metrics, points, point_labels = evaluate_external(
        embeddings, labels, collector=collector, **options
    )
    results = None
    if collector is not None:
        results = external_query_results(collector, embeddings, labels, sample_ids)
    # the sample of each snapshot point: the projector's hover shows its image
    samples = snapshot_rows(len(labels), options.get("snapshot_size", 2000))
    if sample_ids is not None:
        samples = sample_id_array(sample_ids, len(labels))[samples]
    outbox.post_evaluation(dict(metrics), points, point_labels, step, results, samples)
    outbox.deliver(finish=True)
    return metrics
