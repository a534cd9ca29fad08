"""``FileCatalogue``: which run folders and Parquet files exist, and which are bad.

This is all the readers (``db.reader``, ``db.series``, ``db.step_grid``), the levels
and compaction need from the store: where a run's table lives, which of its files
are live (``db.layout.scan_table``), which were quarantined as corrupt, and the list
of problems met on the way (``problems()``). It knows nothing of statuses, user
fields or writers. ``RunStore.files`` is the store's catalogue; a reader given a
``RunStore`` uses that (``catalogue_of``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from db import layout
from db.schema import TABLES

log = logging.getLogger(__name__)

MAX_PROBLEMS = 1000

# Problems already logged by this process, across catalogues: long-lived processes build
# a store per pass or per page (the worker's reaper every 5 s, the dashboard's pages), and
# a damaged file that stays damaged must be one warning, not one per pass.
_logged: dict[tuple[str, str], None] = {}
_logged_lock = threading.Lock()


def _remember(seen: dict[Any, None], key: Any) -> bool:
    """Add ``key`` to the insertion-ordered set ``seen`` (the oldest dropped beyond
    ``MAX_PROBLEMS``); whether it was new. The caller holds the set's lock."""
    if key in seen:
        return False
    seen[key] = None
    while len(seen) > MAX_PROBLEMS:
        seen.pop(next(iter(seen)))
    return True


def _log_once(home: Path, message: str) -> None:
    with _logged_lock:
        new = _remember(_logged, (str(home), message))
    if new:
        log.warning("run store %s: %s", home, message)


class FileCatalogue:
    """The files under ``<home>/runs``. Cheap to create; safe to share between threads.
    Quarantine and known-good marks live in memory, per catalogue."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.runs_dir = home / "runs"
        self._lock = threading.Lock()
        self._problems: dict[str, None] = {}  # insertion-ordered set of messages
        self._bad_files: dict[str, str] = {}
        self._good_files: set[str] = set()

    def __repr__(self) -> str:
        return f"FileCatalogue({str(self.home)!r})"

    # -- folders ------------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        """The folder of ``run_id`` (checked for form, not for existence)."""
        return self.runs_dir / layout.check_run_id(run_id)

    def table_dir(self, run_id: str, table: str) -> Path:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}; known: {', '.join(TABLES)}")
        return self.run_dir(run_id) / "tables" / table

    def exists(self, run_id: str) -> bool:
        """Whether ``run_id`` is a recorded run (``ValueError`` for a malformed id)."""
        return (self.run_dir(run_id) / layout.META).is_file()

    def existing_run_dir(self, run_id: str) -> Path:
        """The folder of a recorded run (``ValueError`` naming the id otherwise)."""
        folder = self.run_dir(run_id)
        if not (folder / layout.META).is_file():
            raise ValueError(f"unknown run id {run_id!r} (no such run in {self.runs_dir})")
        return folder

    # -- files for readers ----------------------------------------------------------------
    def live_files(self, table: str, run_ids: Iterable[str]) -> list[Path]:
        """The Parquet files a reader should read for ``table`` of ``run_ids``, minus
        quarantined files. Foreign files in the folders are reported, never read."""
        paths: list[Path] = []
        for run_id in run_ids:
            files = layout.scan_table(self.table_dir(run_id, table))
            for path in files.foreign:
                self.report_problem(f"foreign file ignored: {path}")
            with self._lock:
                paths.extend(p for p in files.live if str(p) not in self._bad_files)
        return paths

    # -- quarantine ---------------------------------------------------------------------
    def mark_bad_file(self, path: Path, reason: str) -> None:
        """Quarantine ``path``: readers skip it and compaction never deletes it."""
        with self._lock:
            self._bad_files[str(path)] = reason
            self._good_files.discard(str(path))
        self.report_problem(f"corrupt file skipped: {path}: {reason}")

    def is_bad_file(self, path: Path) -> bool:
        with self._lock:
            return str(path) in self._bad_files

    def is_known_good(self, path: Path) -> bool:
        with self._lock:
            return str(path) in self._good_files

    def mark_known_good(self, path: Path) -> None:
        """``path`` was read in full once; store files are immutable, so it stays good."""
        with self._lock:
            self._good_files.add(str(path))

    # -- problems -----------------------------------------------------------------------
    def report_problem(self, message: str) -> None:
        with self._lock:
            new = _remember(self._problems, message)
        if new:
            _log_once(self.home, message)

    def problems(self) -> list[str]:
        """What had to be skipped or ignored (corrupt/foreign files), oldest first."""
        with self._lock:
            return list(self._problems)


class HasFiles(Protocol):
    """Anything that holds a catalogue (``RunStore``)."""

    @property
    def files(self) -> FileCatalogue: ...


FileSource = FileCatalogue | HasFiles


def catalogue_of(source: FileSource) -> FileCatalogue:
    """The catalogue itself, or the one a ``RunStore`` holds (so the read API may keep
    taking the store while the readers depend on the catalogue only)."""
    return source if isinstance(source, FileCatalogue) else source.files
