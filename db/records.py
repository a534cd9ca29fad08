"""The run record (what the dashboard shows about a run) and the status rules."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

STATUSES: tuple[str, ...] = ("queued", "running", "finished", "failed", "cancelled", "lost")
TERMINAL: frozenset[str] = frozenset({"finished", "failed", "cancelled", "lost"})
KINDS: tuple[str, ...] = ("train", "analysis", "external")
# Shown (never written) for a run whose status.json cannot be read and cannot be rebuilt.
UNKNOWN = "unknown"

# Allowed status changes. Setting the current status again only updates the fields.
# Terminal runs may be queued again (a rerun); a run marked lost that turns out to be
# alive may still report its real outcome.
TRANSITIONS: dict[str, frozenset[str]] = {
    "queued": frozenset({"running", "failed", "cancelled", "lost"}),
    "running": frozenset({"finished", "failed", "cancelled", "lost"}),
    "finished": frozenset({"queued"}),
    "failed": frozenset({"queued"}),
    "cancelled": frozenset({"queued"}),
    "lost": frozenset({"queued", "running", "finished", "failed", "cancelled"}),
    # Unreadable status: its own process may still end it, a user may rerun it; nothing
    # may guess that it is lost (the reaper) or start it (a second claim).
    UNKNOWN: frozenset({"queued", "finished", "failed", "cancelled"}),
}


def check_status(status: object) -> str:
    if status not in STATUSES:
        raise ValueError(f"status {status!r} is unknown; choose one of {', '.join(STATUSES)}")
    return str(status)


def check_status_filter(status: object) -> str:
    """A status to filter listings by: a stored one, or ``unknown``."""
    return UNKNOWN if status == UNKNOWN else check_status(status)


def check_kind(kind: object) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is unknown; choose one of {', '.join(KINDS)}")
    return str(kind)


def check_transition(run_id: str, old: str, new: str) -> None:
    if new != old and new not in TRANSITIONS.get(old, frozenset()):
        raise ValueError(f"run {run_id}: cannot change status from {old!r} to {new!r}")


def check_tags(tags: object) -> list[str]:
    """Tags as a sorted list of distinct stripped strings (``ValueError`` otherwise)."""
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        raise ValueError(f"tags must be a list of strings, got {tags!r}")
    items = list(tags)
    if not all(isinstance(t, str) and t.strip() for t in items):
        raise ValueError(f"tags must be non-empty strings, got {items!r}")
    return sorted({t.strip() for t in items})


def to_datetime(epoch: float | None) -> datetime | None:
    """Epoch seconds (as stored in the JSON files) → aware UTC datetime."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(float(epoch), tz=UTC)


@dataclass
class RunRecord:
    """Everything known about one run except its logged values. Times are UTC."""

    run_id: str
    name: str
    kind: str = "train"
    status: str = "queued"
    status_message: str = ""
    progress_step: int | None = None
    progress_total: int | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None
    device: str = ""
    host: str = ""
    tags: list[str] = field(default_factory=list)
    notes: str = ""
    sweep_id: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    run_info: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # other fields given to set_status
    executor: dict[str, Any] = field(default_factory=dict)  # db.scheduler_record; {} when none

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL


RECORD_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(RunRecord))


def build_record(
    run_id: str,
    meta: dict[str, Any],
    status: dict[str, Any] | None,
    heartbeat: dict[str, Any] | None,
    user: dict[str, Any] | None,
    run_info: dict[str, Any] | None,
    executor: dict[str, Any] | None = None,
) -> RunRecord:
    """Assemble a record from the run's JSON files (any but ``meta`` may be missing)."""
    status = status or {}
    heartbeat = heartbeat or {}
    user = user or {}
    run_info = run_info or {}
    return RunRecord(
        run_id=run_id,
        name=str(meta.get("name") or run_id),
        kind=str(meta.get("kind", "train")),
        status=str(status.get("status", meta.get("initial_status", "queued"))),
        status_message=str(status.get("message", "")),
        progress_step=heartbeat.get("step"),
        progress_total=heartbeat.get("total"),
        created_at=to_datetime(meta.get("created_at")),
        started_at=to_datetime(status.get("started_at")),
        finished_at=to_datetime(status.get("finished_at")),
        heartbeat_at=to_datetime(heartbeat.get("at")),
        device=str(status.get("device") or run_info.get("device") or ""),
        host=str(status.get("host") or run_info.get("host") or ""),
        tags=list(user.get("tags", meta.get("tags", []))),
        notes=str(user.get("notes", "")),
        sweep_id=meta.get("sweep_id"),
        config=dict(meta.get("config", {})),
        run_info=dict(run_info),
        extra=dict(status.get("extra", {})),
        executor=dict(executor or {}),
    )
