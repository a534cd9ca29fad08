"""Reading a run's ``status.json`` when it may be damaged, and the claim of a queued run.

A status file that exists but cannot be parsed is never replaced by a guess. Readers
get a status rebuilt from the run's other files: the terminal status that ``ended.json``
keeps (written with every terminal status), else ``unknown``, with a message naming the
file and the last heartbeat. Writers check their transition against that rebuilt
status (``unknown`` may not become ``lost`` or ``running``), and move the damaged file
aside as ``status.json.corrupt-<time>`` before writing a new one, so nothing is lost.

The claim: the one process that turns a ``queued`` run into ``running`` creates the
run's ``claim`` file with ``O_CREAT | O_EXCL``, which the file system grants to exactly
one process even across hosts sharing the folder; a rerun (``queued`` again) removes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from db import layout
from db.atomic import CorruptFileError, read_json
from db.file_catalogue import FileCatalogue
from db.records import TERMINAL, UNKNOWN, to_datetime


class RunAlreadyClaimed(ValueError):
    """Another process took this queued run first."""


def read_status_doc(catalogue: FileCatalogue, folder: Path) -> tuple[dict[str, Any] | None, str]:
    """``(status document, problem)``: the parsed ``status.json`` and ``""``, ``None``
    when it does not exist, or a rebuilt document and the parse error when it is damaged."""
    try:
        return read_json(folder / layout.STATUS), ""
    except CorruptFileError as error:
        catalogue.report_problem(f"{error} (status rebuilt from the run's other files)")
        return rebuilt_status(folder, str(error)), str(error)


def _optional(path: Path) -> dict[str, Any]:
    try:
        return read_json(path) or {}
    except CorruptFileError:
        return {}


def rebuilt_status(folder: Path, problem: str) -> dict[str, Any]:
    """What the run's other files say about its status (``status.json`` being damaged)."""
    ended = _optional(folder / layout.ENDED)
    if ended.get("status") in TERMINAL:
        doc = dict(ended)
        doc["extra"] = {**doc.get("extra", {}), "status_unreadable": problem}
        return doc
    beat = _optional(folder / layout.HEARTBEAT)
    last = "no heartbeat"
    if beat.get("at") is not None:
        when = to_datetime(beat["at"])
        last = f"last heartbeat at step {beat.get('step')} ({when:%Y-%m-%d %H:%M:%S} UTC)"
    return {
        "status": UNKNOWN,
        "message": f"status unreadable: {problem}; {last}",
        "extra": {"status_unreadable": problem},
    }


def set_damaged_aside(folder: Path) -> None:
    """Keep a damaged ``status.json`` (as ``status.json.corrupt-<time>``) before a
    writer replaces it."""
    target = folder / f"{layout.STATUS}.corrupt-{time.time():.0f}"
    with contextlib.suppress(FileNotFoundError):
        os.replace(folder / layout.STATUS, target)


def claim(folder: Path, run_id: str) -> None:
    """Take the queued run for this process (``RunAlreadyClaimed`` if another did)."""
    owner = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "at": time.time()})
    try:
        fd = os.open(folder / layout.CLAIM, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise RunAlreadyClaimed(f"run {run_id}: another process already took it") from None
    try:
        os.write(fd, owner.encode())
    finally:
        os.close(fd)


def release_claim(folder: Path) -> None:
    """Forget the claim (the run is queued again, or this process could not start it)."""
    (folder / layout.CLAIM).unlink(missing_ok=True)
