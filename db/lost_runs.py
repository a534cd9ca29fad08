"""The lost-run rule, written once: a ``running`` run whose heartbeat stopped is ``lost``.

Used by each worker's reaper thread, by ``spherescope status`` and by
``RunStore.mark_lost_runs``. Every process that runs a run (Celery task, CLI, SDK)
beats through ``db.lifecycle.RunLifecycle``, so a live process is never marked lost
unless it stops beating for ``max_age_s``.

Remote writers (``db.remote``: a machine writing through the ingest service, status
extra ``remote``) get ``remote_grace_s()`` more: their client keeps what it logs on its
own disk while the service cannot be reached, and resends it. Meanwhile the run stays
``running`` with a status message that starts with ``RECONNECTING`` (cleared by the
ingest service on the client's next contact).

Race guard: the listing is a snapshot. Just before marking, the run is read again and
left alone if it ended or beat in the meantime; a run that ends between that re-read
and the write is protected by the status rules (``finished → lost`` is refused).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Container
from datetime import UTC, datetime

from db.file_catalogue import FileSource, catalogue_of
from db.records import RunRecord
from db.run_index import get_run, list_runs
from db.run_status import set_status

log = logging.getLogger(__name__)

REMOTE_GRACE_ENV = "SPHERESCOPE_REMOTE_GRACE_S"
DEFAULT_REMOTE_GRACE_S = 1800.0
RECONNECTING = "reconnecting"


def remote_grace_s() -> float:
    """Extra silence allowed to a remote writer's run (``SPHERESCOPE_REMOTE_GRACE_S``)."""
    raw = os.environ.get(REMOTE_GRACE_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_REMOTE_GRACE_S
    except ValueError:
        raise ValueError(f"{REMOTE_GRACE_ENV} must be a number of seconds, got {raw!r}") from None
    if not value >= 0:
        raise ValueError(f"{REMOTE_GRACE_ENV} must be >= 0 seconds, got {raw!r}")
    return value


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
    grace = remote_grace_s()
    for listed in list_runs(catalogue, status="running"):
        if listed.run_id in spare or silence_s(listed, now or datetime.now(UTC)) <= max_age_s:
            continue
        try:
            record = get_run(catalogue, listed.run_id)  # fresh: it may have beaten or ended
            age = silence_s(record, now or datetime.now(UTC))
            if record.status != "running" or age <= max_age_s:
                continue
            if record.extra.get("remote") and age <= max_age_s + grace:
                _note_reconnecting(catalogue, record, max_age_s + grace)
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


def _note_reconnecting(catalogue: FileSource, record: RunRecord, allowed_s: float) -> None:
    """Say (once) that a remote run's writer is out of reach but may still come back."""
    if record.status_message.startswith(RECONNECTING):
        return
    last = record.heartbeat_at or record.started_at or record.created_at
    since = last.strftime("%H:%M:%S UTC") if last else "its start"
    set_status(
        catalogue,
        record.run_id,
        "running",
        f"{RECONNECTING}: its writer on {record.host or 'another machine'} has not reached "
        f"the store since {since}; it keeps what it logs on its own disk and resends it "
        f"(lost after {allowed_s:.0f} s of silence)",
    )
