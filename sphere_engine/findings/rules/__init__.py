"""The findings catalogue: importing this package registers every rule, in order."""

# isort: skip_file
from sphere_engine.findings.rules import (  # noqa: F401  (registration order = listing order)
    divergence,
    loss_activity,
    direction_balance,
    norm_shrinking,
    collapse,
    vertices,
    evaluation_trend,
)
