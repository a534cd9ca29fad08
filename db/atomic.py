"""Atomic file replacement: the one write primitive of the store.

A file is written under a temporary name in the same folder, optionally fsynced, then
renamed over its final name with ``os.replace``. Rename is atomic on POSIX local and
network file systems, so a reader sees either the old file or the new one, never a
half-written one. No locks are used (``flock`` is unreliable on shared file systems).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from db.write_errors import NoSpaceError, is_no_space

TEMP_PREFIX = ".tmp-"


def temp_path_for(path: Path) -> Path:
    """A unique temporary name next to ``path``; never matches a reader's file pattern."""
    return path.with_name(f"{TEMP_PREFIX}{uuid.uuid4().hex}-{path.name}.part")


def write_atomic(path: Path, write: Callable[[Path], None], *, fsync: bool = True) -> None:
    """Call ``write(temp_path)`` and rename the result over ``path``.

    On any error the temporary file is removed and the error propagates (a full disk
    as ``db.write_errors.NoSpaceError``, naming ``path``).
    """
    temp = temp_path_for(path)
    try:
        write(temp)
        if fsync:
            fd = os.open(temp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(temp, path)
    except BaseException as error:
        temp.unlink(missing_ok=True)
        if is_no_space(error):  # one line naming the file, not a bare "[Errno 28]"
            raise NoSpaceError(path) from None
        raise


def write_json_atomic(path: Path, data: dict[str, Any], *, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` as JSON (``ValueError`` if not serialisable)."""
    try:
        text = json.dumps(data, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path.name}: value is not JSON-serialisable ({error})") from None
    write_atomic(path, lambda temp: temp.write_text(text, encoding="utf-8"), fsync=fsync)


class CorruptFileError(ValueError):
    """A store file exists but cannot be parsed."""


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; ``None`` if the file does not exist.

    Raises ``CorruptFileError`` if it exists but is not a JSON object.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise CorruptFileError(f"{path}: unreadable ({error})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CorruptFileError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise CorruptFileError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data
