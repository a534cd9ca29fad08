"""``RunStore``: runs, their status and their logged values under ``SPHERESCOPE_HOME``.

Many processes (workers on several machines, the dashboard) use one store at once; no
process opens a database file. Writers append immutable Parquet chunks and replace
small JSON files atomically (see ``db.layout`` for the folder layout); readers query
the Parquet files through DuckDB (``db.reader``, ``db.queries``).

``RunStore`` is a facade: each job lives in its own module, taking the store's
``FileCatalogue`` (``store.files``, ``db.file_catalogue``): records in ``db.run_index``,
status/heartbeat/cancel in ``db.run_status``, tags/notes/run info in
``db.user_fields``, the lost-run rule in ``db.lost_runs``, writers in ``db.tracker``,
``db.compaction``, ``db.query_results`` and ``db.thumbnails``. The readers depend on the
catalogue only; no module below imports this facade.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from db import layout, lost_runs, run_index, run_status, user_fields
from db.file_catalogue import FileCatalogue
from db.records import TERMINAL, RunRecord
from db.tracker import StoreTracker


class RunStore:
    """The run store rooted at ``home`` (default ``$SPHERESCOPE_HOME`` or
    ``./spherescope-data``). Cheap to create; safe to share between threads."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.home = layout.resolve_home(home)
        self.files = FileCatalogue(self.home)
        self.runs_dir = self.files.runs_dir
        self.runs_dir.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"RunStore({str(self.home)!r})"

    # -- paths ----------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        """The folder of ``run_id`` (checked for form, not for existence)."""
        return self.files.run_dir(run_id)

    def table_dir(self, run_id: str, table: str) -> Path:
        return self.files.table_dir(run_id, table)

    def checkpoint_dir(self, run_id: str) -> Path:
        """Where the run's checkpoint files go (created on demand)."""
        folder = self.files.existing_run_dir(run_id) / "checkpoints"
        folder.mkdir(exist_ok=True)
        return folder

    def exists(self, run_id: str) -> bool:
        return self.files.exists(run_id)

    # -- records (db.run_index) ------------------------------------------------------------
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
    ) -> str:
        """Record a new run and return its id (time-sortable, unique across machines);
        ``project`` default ``default``."""
        return run_index.create_run(
            self.files,
            config,
            name,
            kind=kind,
            tags=tags,
            sweep_id=sweep_id,
            status=status,
            project=project,
        )

    def run_ids(self) -> list[str]:
        """Ids of all runs, sorted (ids start with their creation time, to the second)."""
        return run_index.run_ids(self.files)

    def get_run(self, run_id: str) -> RunRecord:
        """The record of ``run_id`` (``ValueError`` if unknown or its meta.json is corrupt)."""
        return run_index.get_run(self.files, run_id)

    def list_runs(
        self,
        *,
        status: str | Sequence[str] | None = None,
        search: str | None = None,
        tag: str | None = None,
        sweep_id: str | None = None,
        kind: str | None = None,
        project: str | None = None,
        archived: bool | None = None,
    ) -> list[RunRecord]:
        """Records matching every given filter, newest first, from the run catalogue
        (see ``run_index.list_runs``)."""
        return run_index.list_runs(
            self.files,
            status=status,
            search=search,
            tag=tag,
            sweep_id=sweep_id,
            kind=kind,
            project=project,
            archived=archived,
        )

    def delete_run(self, run_id: str) -> None:
        """Move the run to the trash (readers see all of it or nothing; ``spherescope
        store gc`` frees it)."""
        run_index.delete_run(self.files, run_id)

    def set_archived(self, run_id: str, archived: bool = True) -> None:
        """Archive a run (it leaves the default listings, stays searchable) or unarchive."""
        user_fields.set_archived(self.files, run_id, archived)

    # -- status, heartbeat, cancel (db.run_status, db.lost_runs) -----------------------------
    def set_status(self, run_id: str, status: str, message: str = "", **fields: Any) -> None:
        """Change the run's status (``ValueError`` for a transition that makes no sense);
        see ``run_status.set_status``. Never compacts (see ``end_run``)."""
        run_status.set_status(self.files, run_id, status, message, **fields)

    def note_queued(self, run_id: str, message: str) -> None:
        """The status message of a run still ``queued``: why it waits (``run_status``)."""
        run_status.note_queued(self.files, run_id, message)

    def start_run(self, run_id: str, **fields: Any) -> None:
        """Claim a queued run for this process: ``queued`` → ``running`` for exactly one
        caller, even across processes and hosts (``run_status.start_run``)."""
        run_status.start_run(self.files, run_id, **fields)

    def end_run(self, run_id: str, status: str, message: str = "", **fields: Any) -> None:
        """Set a terminal status (which stores the run's final values and findings
        first, as every move into a terminal status does), then compact the run (one
        file per table for readers).

        For the process that wrote the run, once its tracker has flushed (``RunLifecycle``
        does both). The reaper and the Celery parent use ``set_status`` alone: DuckDB and
        Arrow thread pools must not start in a process that later forks pool children
        (their endings are read in a subprocess, ``db.catalogue.ending``). A failed
        compaction loses nothing (the chunks stay readable) and is reported in
        ``problems()``.
        """
        if status not in TERMINAL:
            raise ValueError(f"end_run: {status!r} is not a terminal status ({sorted(TERMINAL)})")
        run_status.end_status(self.files, run_id, status, message, **fields)
        try:
            self.compact(run_id)
        except Exception as error:  # the status is written; a failed compaction loses nothing
            self.report_problem(f"run {run_id}: compaction after it ended failed ({error})")
        # its disk usage after compaction, and fold the catalogue's deltas now and then
        # (this process may start Arrow; a worker's parent never does)
        from db.catalogue import journal, snapshot
        from db.catalogue.rows import row_of

        try:
            journal.write_delta(self.files, row_of(self.files, run_id))
            if len(journal.delta_files(self.files)) > journal.COMPACT_AFTER:
                snapshot.compact(self.files)
        except Exception as error:  # the status is written and its row with it
            self.report_problem(f"run {run_id}: catalogue refresh after it ended failed ({error})")

    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None:
        """Record that the run is alive, with its progress (``None`` keeps the last value)."""
        run_status.heartbeat(self.files, run_id, step, total)

    def note_write_error(self, run_id: str, message: str) -> None:
        """Record a tracker's failed write in the run's status (``extra.write_error``)."""
        run_status.note_write_error(self.files, run_id, message)

    def mark_lost_runs(self, max_silence_s: float = 300.0) -> list[str]:
        """Mark ``running`` runs silent for more than ``max_silence_s`` as ``lost``; their
        ids. The one lost-run rule, ``db.lost_runs.mark_lost_runs``."""
        return lost_runs.mark_lost_runs(self.files, max_silence_s)

    def request_cancel(self, run_id: str, reason: str = "") -> None:
        """Ask the run's trainer to stop (it polls ``cancel_requested``); ``reason``
        (e.g. "stopped: the stack was shut down") starts its final status message."""
        run_status.request_cancel(self.files, run_id, reason)

    def cancel_reason(self, run_id: str) -> str:
        """The ``reason`` given to ``request_cancel`` ("" when none or unreadable)."""
        return run_status.cancel_reason(self.files, run_id)

    def cancel_requested(self, run_id: str) -> bool:
        """Cheap enough to call every training iteration (one ``stat``)."""
        return run_status.cancel_requested(self.files, run_id)

    def mark_watched(self, run_id: str) -> None:
        """A live page shows the run now: its tracker flushes more often for a while
        (``StoreTracker(watched_flush_interval=...)``, ``run_status.WATCHED_FOR_S``)."""
        run_status.mark_watched(self.files, run_id)

    def is_watched(self, run_id: str) -> bool:
        """Whether a live page marked the run in the last ``run_status.WATCHED_FOR_S``."""
        return run_status.is_watched(self.files, run_id)

    # -- user fields (db.user_fields) ----------------------------------------------------
    def set_tags(self, run_id: str, tags: Iterable[str]) -> None:
        user_fields.set_tags(self.files, run_id, tags)

    def set_notes(self, run_id: str, notes: str) -> None:
        user_fields.set_notes(self.files, run_id, notes)

    def update_run_info(self, run_id: str, info: Mapping[str, Any]) -> None:
        """Merge ``info`` (from ``track_run_info``) into the run's info (made JSON-plain)."""
        user_fields.update_run_info(self.files, run_id, info)

    # -- writing values --------------------------------------------------------------
    def tracker(self, run_id: str, flush_interval: float = 1.0, **options: Any) -> StoreTracker:
        """The store-backed ``Tracker`` for ``run_training`` (see ``db.tracker``)."""
        return StoreTracker(self.files, run_id, flush_interval=flush_interval, **options)

    def compact(self, run_id: str, *, full: bool = True, wait: bool = True) -> dict[str, int]:
        """Merge each table's files into one (``full``) or in tiers (a live run, see
        ``db.compaction``); returns files merged per table."""
        from db.compaction import compact_run

        return compact_run(self.files, run_id, full=full, wait=wait)

    # -- files for readers, and problems (db.file_catalogue) ----------------------------------
    def live_files(self, table: str, run_ids: Iterable[str]) -> list[Path]:
        """The Parquet files a reader should read (see ``FileCatalogue.live_files``)."""
        return self.files.live_files(table, run_ids)

    def report_problem(self, message: str) -> None:
        self.files.report_problem(message)

    def problems(self) -> list[str]:
        """What readers had to skip or ignore (corrupt files, foreign files), oldest first."""
        return self.files.problems()

    def mark_bad_file(self, path: Path, reason: str) -> None:
        self.files.mark_bad_file(path, reason)

    def is_bad_file(self, path: Path) -> bool:
        return self.files.is_bad_file(path)

    def is_known_good(self, path: Path) -> bool:
        return self.files.is_known_good(path)

    def mark_known_good(self, path: Path) -> None:
        self.files.mark_known_good(path)
