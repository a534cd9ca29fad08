"""Per-step embedding statistics: the batch groups (``batch_statistics``), their host-side
finish (``numpy_finish``, ``step_transfer``, ``batched_finish``), tracked samples and their
direction turns, and ``external_step`` for embeddings from someone else's training loop."""

from sphere_engine.diagnostics.batch_statistics import (
    batch_statistics,
    embedding_statistics,
    gradient_statistics,
    packed_norm_statistics,
    pair_cosines,
)
from sphere_engine.diagnostics.direction_tracker import DirectionTracker
from sphere_engine.diagnostics.numpy_finish import (
    DIRECTION_NAMES,
    GRADIENT_NAMES,
    HISTOGRAM_NAMES,
    NORM_NAMES,
    PAIR_NAMES,
    norm_histogram,
)
from sphere_engine.diagnostics.step_transfer import (
    HOST_REDUCE_MAX_VALUES,
    PackedStatistics,
    StepStatistics,
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
