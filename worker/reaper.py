"""The reaper: runs still marked ``running`` whose heartbeat stopped become ``lost``.

Tasks are acknowledged when they start, so Redis never re-runs a run whose worker
died; this check is what turns such a run into a visible outcome. It runs in every
worker's main process (``reaper_thread``) and once per ``spherescope status``. The rule,
with its race guard, is ``db.lost_runs.mark_lost_runs`` (also ``RunStore.mark_lost_runs``).
SLURM runs are first checked with SLURM (``worker.slurm.states``): a pending or requeued
job is spared, an ended job's run gets SLURM's reason. A run marked lost gets its final
values and findings stored first, as every ended run (``db.catalogue.ending``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from db.catalogue import ending
from db.lost_runs import mark_lost_runs
from db.store import RunStore
from worker import settings
from worker.periodic import PeriodicThread
from worker.slurm.states import refresh_slurm_runs


def reap_lost(
    store: RunStore, max_age_s: float | None = None, now: datetime | None = None
) -> list[str]:
    """Mark running runs without a heartbeat for ``max_age_s`` seconds (default
    ``SPHERESCOPE_LOST_AFTER_S``) as lost; their ids. The rule is ``db.lost_runs``'s."""
    max_age_s = settings.lost_after() if max_age_s is None else max_age_s
    return mark_lost_runs(store, max_age_s, now, spare=refresh_slurm_runs(store))


def reaper_thread(interval: float, also: Callable[[], None] | None = None) -> PeriodicThread:
    """Calls ``reap_lost`` and then ``also`` every ``interval`` seconds until stopped.
    For a worker's main process, which forks pool children: from now on this process
    reads the final values and findings of the runs it ends in a subprocess."""
    ending.read_in_subprocess()

    def reap() -> None:
        reap_lost(RunStore())
        if also is not None:
            also()

    return PeriodicThread("spherescope-reaper", interval, reap)
