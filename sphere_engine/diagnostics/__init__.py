"""Per-step embedding statistics: the batch groups (``batch_statistics``), their host-side
finish (``numpy_finish``, ``step_transfer``, ``batched_finish``), tracked samples and their
direction turns, and ``external_step`` for embeddings from someone else's training loop."""

from sphere_engine.diagnostics.batch_statistics import (
    DIRECTION_NAMES,
    GRADIENT_NAMES,
    HISTOGRAM_NAMES,
    HOST_REDUCE_MAX_VALUES,
    NORM_NAMES,
    PAIR_NAMES,
    DirectionTracker,
    PackedStatistics,
    StepStatistics,
    batch_statistics,
    embedding_statistics,
    gradient_statistics,
    norm_histogram,
    packed_norm_statistics,
    pair_cosines,
    reduces_on_host,
)

__all__ = [
    "DIRECTION_NAMES",
    "GRADIENT_NAMES",
    "HISTOGRAM_NAMES",
    "HOST_REDUCE_MAX_VALUES",
    "NORM_NAMES",
    "PAIR_NAMES",
    "DirectionTracker",
    "PackedStatistics",
    "StepStatistics",
    "batch_statistics",
    "embedding_statistics",
    "gradient_statistics",
    "norm_histogram",
    "packed_norm_statistics",
    "pair_cosines",
    "reduces_on_host",
]
