"""The lost-run rule, written once: a ``running`` run whose heartbeat stopped is ``lost``.

Used by each worker's reaper thread, by ``spherescope status`` and by
``RunStore.mark_lost_runs``. Every process that runs a run (Celery task, CLI, SDK)
beats through ``db.lifecycle.RunLifecycle``, so a live process is never marked lost
unless it stops beating for ``max_age_s``.

Race guard: the listing is a snapshot. Just before marking, the run is read again and
left alone if it ended or beat in the meantime; a run that ends between that re-read
and the write is protected by the status rules (``finished → lost`` is refused).
"""

from __future__ import annotations

import logging
from collections.abc import Container
from datetime import UTC, datetime

from db.file_catalogue import FileSource, catalogue_of
from db.records import RunRecord
from db.run_index import get_run, list_runs
from db.run_status import set_status

log = logging.getLogger(__name__)


def silence_s(record: RunRecord, now: datetime) -> float:
    """Seconds since the run last showed life (heartbeat, else start, else creation)."""
    last = record.heartbeat_at or record.started_at or record.created_at
    return (now - last).total_seconds() if last else float("inf")


def mark_lost_runs(
    source: FileSource,
    max_age_s: float,
    now: datetime | None = None,
    spare: Container[str] = (),
) -> list[str]:
    """Mark running runs without a heartbeat for more than ``max_age_s`` seconds as
    ``lost``; return their ids. ``spare``: runs a scheduler still holds (a requeued SLURM
    job beats again once it starts). ``now`` (aware UTC) is for tests."""
    if not max_age_s >= 0:
        raise ValueError(f"max_age_s: {max_age_s!r} must be a number >= 0")
    catalogue = catalogue_of(source)
    reaped = []
    for listed in list_runs(catalogue, status="running"):
        if listed.run_id in spare or silence_s(listed, now or datetime.now(UTC)) <= max_age_s:
            continue
        try:
            record = get_run(catalogue, listed.run_id)  # fresh: it may have beaten or ended
            age = silence_s(record, now or datetime.now(UTC))
            if record.status != "running" or age <= max_age_s:
                continue
            set_status(
                catalogue,
                record.run_id,
                "lost",
                f"no heartbeat for {age:.0f} s: the process running it stopped "
                f"(host {record.host or 'unknown'}); its data up to then is kept",
            )
        except ValueError:  # deleted, or it ended just now (finished → lost is refused)
            continue
        log.warning("run %s marked lost (no heartbeat for %.0f s)", record.run_id, age)
        reaped.append(record.run_id)
    return reaped
