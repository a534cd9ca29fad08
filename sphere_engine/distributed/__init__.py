"""Data-parallel jobs: which rank this is, and the collectives SphereScope needs.

Used by the SDK (``spherescope``) and by the engine's multi-device loop: detect the
job (``detect``), gather a logged step's global batch (``gather_batch``) and its
gradients (``gather_rows``), reduce scalars (``reduce_values``), share the run id
(``broadcast_object``), and rebuild an evaluation set from its shards without the
sampler's padding (``gather_union``, ``union_rows``).
"""

from sphere_engine.distributed.context import (
    DistributedContext,
    detect,
    launcher_world,
    single_process,
)
from sphere_engine.distributed.gather import (
    REDUCTIONS,
    GatheredBatch,
    GatherError,
    broadcast_object,
    gather_batch,
    gather_rows,
    gather_sizes,
    reduce_values,
)
from sphere_engine.distributed.shards import gather_union, union_rows

__all__ = [
    "REDUCTIONS",
    "DistributedContext",
    "GatherError",
    "GatheredBatch",
    "broadcast_object",
    "detect",
    "gather_batch",
    "gather_rows",
    "gather_sizes",
    "gather_union",
    "launcher_world",
    "reduce_values",
    "single_process",
    "union_rows",
]
