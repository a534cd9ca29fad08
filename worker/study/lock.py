"""One coordinator per study: an advisory lock on the study's folder that the OS drops
when its process dies (so a killed coordinator never blocks the next)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from worker.study import storage


class StudyAlreadyRunning(RuntimeError):
    """Another coordinator holds the study's lock."""


def _lock_path(home: Path, study_id: str) -> Path:
    return storage.study_dir(home, study_id) / "coordinator.lock"


@contextlib.contextmanager
def coordinator_lock(home: Path, study_id: str) -> Iterator[None]:
    """Hold the study's lock (its file names the holder's pid) or raise
    ``StudyAlreadyRunning``."""
    handle = _lock_path(home, study_id).open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StudyAlreadyRunning(
            f"study {study_id}: a coordinator is already running (pid {holder})"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    try:
        yield
    finally:
        handle.close()


def coordinator_running(home: Path, study_id: str) -> bool:
    path = _lock_path(home, study_id)
    if not path.exists():
        return False
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def coordinator_pid(home: Path, study_id: str) -> int | None:
    """The pid of the study's running coordinator (the lock's holder), else None."""
    if not coordinator_running(home, study_id):
        return None
    try:
        return int(_lock_path(home, study_id).read_text().strip())
    except (OSError, ValueError):
        return None
