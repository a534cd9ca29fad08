"""Whether a run has an evaluation in flight (the Run page's "evaluation running" tile).

A background evaluation (``sphere_engine.evaluation.background``) logs the scalar
``eval/pending`` at the step its embeddings were taken when it is submitted, and its
results, ``eval/seconds`` among them, at that same step when the training loop
collects it. So an evaluation is in flight while a step has ``eval/pending`` > 0 and
no ``eval/seconds`` yet; the oldest such is the one computing now (one worker), and
it has been running since that scalar's wall time.
"""

from __future__ import annotations

from dataclasses import dataclass

from db.reader import query_arrow
from db.schema import EVALS, SCALARS
from db.selection import check_runs
from db.store import RunStore

SUBMITTED = "eval/pending"
FINISHED = "eval/seconds"


@dataclass(frozen=True)
class RunningEvaluation:
    """The oldest evaluation in flight: the step it evaluates, when it was submitted."""

    step: int
    submitted_at: float  # wall time, seconds since the epoch


def running_evaluation(store: RunStore, run_id: str) -> RunningEvaluation | None:
    """The run's oldest evaluation without a result yet, or None (module doc)."""
    runs = check_runs(store, [run_id])
    sql = (
        "SELECT step, min(wall_time) AS wall_time FROM s "
        "WHERE name = $submitted AND value > 0 "
        "AND step NOT IN (SELECT step FROM e WHERE name = $finished) "
        "GROUP BY step ORDER BY step LIMIT 1"
    )
    sources = {"s": (SCALARS, runs), "e": (EVALS, runs)}
    rows = query_arrow(store, sources, sql, {"submitted": SUBMITTED, "finished": FINISHED})
    if rows.num_rows == 0:
        return None
    return RunningEvaluation(
        int(rows.column("step")[0].as_py()), float(rows.column("wall_time")[0].as_py())
    )
