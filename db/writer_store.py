"""``WriterStore``: what a process that runs a run writes through, whichever store it is.

Two classes satisfy it: ``db.store.RunStore`` (the folder under ``SPHERESCOPE_HOME``)
and ``db.remote.store.RemoteStore`` (the stack's store over HTTP(S), through the ingest
service). The run lifecycle (``db.lifecycle``), the SDK (``spherescope``), ``spherescope
train`` / ``analyze`` / ``export-model`` and the SLURM job take a ``WriterStore``, so the
same code records a run into either; ``db.remote.writer_store()`` picks one from the
environment. ``WriterTracker`` is what its ``tracker()`` gives: the engine's
``Tracker`` plus the buffer size the SDK bounds its memory with.

Both are ``runtime_checkable`` (``isinstance`` checks that the members exist); a test
checks each member's signature against both classes. Torch-free: typing only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from db.records import RunRecord
from sphere_engine.tracking import Tracker


@runtime_checkable
class WriterTracker(Tracker, Protocol):
    """The store-backed tracker of one run (``db.tracker.StoreTracker``,
    ``db.remote.tracker.RemoteTracker``)."""

    def buffered_rows(self) -> int:
        """What is held in memory, not yet written (or spooled)."""
        ...


@runtime_checkable
class WriterStore(Protocol):
    """The write surface of a run store (see the module doc)."""

    home: Path  # this side's folder: checkpoints, logs (and a remote writer's spool)

    # -- this side's folders
    def run_dir(self, run_id: str) -> Path: ...

    def checkpoint_dir(self, run_id: str) -> Path: ...

    # -- records
    def exists(self, run_id: str) -> bool: ...

    def create_run(
        self,
        config: Mapping[str, Any],
        name: str | None = None,
        *,
        kind: str = "train",
        tags: Iterable[str] = (),
        sweep_id: str | None = None,
        status: str = "queued",
        project: str | None = None,
    ) -> str: ...

    def get_run(self, run_id: str) -> RunRecord: ...

    def list_runs(
        self, *, status: str | Sequence[str] | None = None, kind: str | None = None
    ) -> list[RunRecord]: ...

    def delete_run(self, run_id: str) -> None: ...

    # -- status, heartbeat, cancel
    def start_run(self, run_id: str, **fields: Any) -> None: ...

    def set_status(self, run_id: str, status: str, message: str = "", **fields: Any) -> None: ...

    def end_run(self, run_id: str, status: str, message: str = "", **fields: Any) -> None: ...

    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None: ...

    def note_write_error(self, run_id: str, message: str) -> None: ...

    def cancel_requested(self, run_id: str) -> bool: ...

    def cancel_reason(self, run_id: str) -> str: ...

    def is_watched(self, run_id: str) -> bool: ...

    # -- user fields
    def set_tags(self, run_id: str, tags: Iterable[str]) -> None: ...

    def set_notes(self, run_id: str, notes: str) -> None: ...

    def update_run_info(self, run_id: str, info: Mapping[str, Any]) -> None: ...

    # -- logged values, problems
    def tracker(
        self, run_id: str, flush_interval: float = 1.0, **options: Any
    ) -> WriterTracker: ...

    def report_problem(self, message: str) -> None: ...
