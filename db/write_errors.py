"""Failed writes to the store, as one line a person can act on, and the space reserve.

A full disk (``ENOSPC``, or ``EDQUOT`` over quota) is reported as ``no space left on
device writing <path>``, never as a traceback. So that a run can still record why it
failed when the disk is full, ``RunLifecycle`` keeps a small reserve file in the run's
folder while the run lives and gives it back to write the run's end.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})
RESERVE = ".space-reserve"  # hidden: never listed as a run's file
RESERVE_BYTES = 256 * 1024  # room for the end status, its copy and their temp files


class StoreWriteError(RuntimeError):
    """Buffered values could not be written to the store (they stay buffered)."""


class NoSpaceError(OSError):
    """The file system holding the store is full; ``str()`` is the one-line message."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(errno.ENOSPC, f"no space left on device writing {path}")
        self.path = str(path)

    def __str__(self) -> str:
        return str(self.strerror)


def is_no_space(error: BaseException) -> bool:
    return isinstance(error, OSError) and error.errno in NO_SPACE


def describe_write_error(error: BaseException, path: Path | str) -> str:
    """One line: the full-disk message naming ``path``, else ``Type: message``."""
    if isinstance(error, NoSpaceError):
        return str(error)
    if is_no_space(error):
        return str(NoSpaceError(path))
    return f"{type(error).__name__}: {error}"


def reserve_space(folder: Path) -> bool:
    """Set ``RESERVE_BYTES`` aside in ``folder`` (False if there is no room even for that)."""
    try:
        with open(folder / RESERVE, "wb") as handle:
            handle.write(b"\0" * RESERVE_BYTES)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError:
        (folder / RESERVE).unlink(missing_ok=True)
        return False
    return True


def release_space(folder: Path) -> bool:
    """Give the reserve back to the file system; whether there was one."""
    try:
        (folder / RESERVE).unlink()
    except FileNotFoundError:
        return False
    return True
