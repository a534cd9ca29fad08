"""A run's status, heartbeat and cancel flag (``status.json``, ``heartbeat.json``,
``CANCEL``): the writes that move a run through its life (see ``db.lifecycle``)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from db import layout
from db.atomic import write_json_atomic
from db.catalogue import ending, journal
from db.file_catalogue import FileCatalogue
from db.records import TERMINAL, check_status, check_transition
from db.run_index import read_optional
from db.status_file import (
    RunAlreadyClaimed,
    claim,
    read_status_doc,
    release_claim,
    set_damaged_aside,
)

RECORD_FIELDS = ("device", "host")  # set_status fields that go to the record, not extra


def set_status(
    catalogue: FileCatalogue, run_id: str, status: str, message: str = "", **fields: Any
) -> None:
    """Change the run's status (``ValueError`` for a transition that makes no sense).

    ``running`` sets the start time, a terminal status the finish time, ``queued``
    clears both and the cancel flag (a rerun). ``device``/``host`` go to the
    record; other keyword fields (JSON values) go to ``record.extra``.
    """
    _change(catalogue, run_id, status, message, fields, must_claim=False)


def end_status(
    catalogue: FileCatalogue, run_id: str, status: str, message: str = "", **fields: Any
) -> None:
    """``set_status`` to a terminal status by the run's own process, after its last
    write: its final values and findings are stored again even if the run already had
    that status (another process set it before the last values were written)."""
    if status not in TERMINAL:
        raise ValueError(f"{status!r} is not a terminal status ({sorted(TERMINAL)})")
    _change(catalogue, run_id, status, message, fields, must_claim=False, record_ending=True)


def start_run(catalogue: FileCatalogue, run_id: str, **fields: Any) -> None:
    """``queued`` → ``running`` for exactly one of the processes that call it
    (``status_file.RunAlreadyClaimed``, a ValueError, for the others, and for a run
    that is no longer queued); ``fields`` as for ``set_status``."""
    _change(catalogue, run_id, "running", "", fields, must_claim=True)


def _change(
    catalogue: FileCatalogue,
    run_id: str,
    status: str,
    message: str,
    fields: dict[str, Any],
    *,
    must_claim: bool,
    record_ending: bool = False,
) -> None:
    """The one path of every status change: move ``run_id`` to ``status`` with
    ``message`` and ``fields`` (``set_status``'s), inside the catalogue journal so the
    catalogue row follows in the same step.

    The state machine is ``db.records.TRANSITIONS``: queued → running → finished /
    failed / cancelled / lost; queued may also end without running; an ended run goes
    back to queued only (a rerun); lost may still end or run (its process was only
    silent); an unreadable status may end or be rerun, never be guessed lost or started.
    A change to the same status only updates its message and fields. Entering running
    from queued takes the run's claim (an ``O_EXCL`` file: exactly one process starts
    it); ``must_claim`` (``start_run``) refuses any run that is not queued with
    ``RunAlreadyClaimed``. Entering running stamps ``started_at``, an end
    ``finished_at`` (and keeps a copy a damaged status is rebuilt from), queued clears
    both, the cancel flag and the claim. Entering a terminal status first stores the
    run's final values and findings in its info (``db.catalogue.ending``), whoever ends
    it, so its catalogue row and a rebuild's agree. ``ValueError`` for an unknown status, a
    non-string message or a transition the machine does not have.
    """
    check_status(status)
    if not isinstance(message, str):
        raise ValueError(f"status message must be a string, got {message!r}")
    folder = catalogue.existing_run_dir(run_id)
    ends = False
    if status in TERMINAL:  # what the run stored, before its end (its row then has it)
        before = (read_status_doc(catalogue, folder)[0] or {}).get("status", "queued")
        check_transition(run_id, before, status)  # a refused end reads nothing
        ends = before != status or record_ending
        if ends and not ending.in_background():
            ending.record_ending(catalogue, run_id)  # seconds, for a long run: not pending
    # the status is read again below: the run may have moved while its ending was read
    with journal.pending(catalogue, run_id):  # the catalogue row changes in the same step
        _write_change(catalogue, run_id, status, message, fields, must_claim=must_claim)
    if ends and ending.in_background():  # stored after, with the row again (``ending``)
        ending.record_ending(catalogue, run_id)


def _write_change(
    catalogue: FileCatalogue,
    run_id: str,
    status: str,
    message: str,
    fields: dict[str, Any],
    *,
    must_claim: bool,
) -> None:
    folder = catalogue.existing_run_dir(run_id)
    old, problem = read_status_doc(catalogue, folder)
    old = old or {}
    old_status = old.get("status", "queued")
    check_transition(run_id, old_status, status)
    if must_claim and old_status != "queued":
        raise RunAlreadyClaimed(f"run {run_id}: it is {old_status}, not queued")
    claiming = status == "running" and (old_status == "queued" or must_claim)
    if claiming:
        claim(folder, run_id)  # exactly one process starts a queued run
    if problem:
        set_damaged_aside(folder)
    now = time.time()
    doc = dict(old)
    doc["status"] = status
    doc["message"] = message
    if status == "queued":
        doc.pop("started_at", None)
        doc.pop("finished_at", None)
        (folder / layout.CANCEL).unlink(missing_ok=True)
        (folder / layout.ENDED).unlink(missing_ok=True)
        release_claim(folder)
    elif status == "running" and old_status != "running":
        doc["started_at"] = now
        doc.pop("finished_at", None)
    elif status in TERMINAL and old_status != status:
        doc["finished_at"] = now
    extra = dict(doc.get("extra", {}))
    extra.pop("status_unreadable", None)
    for key, value in fields.items():
        if key in RECORD_FIELDS:
            doc[key] = str(value)
        else:
            extra[key] = value
    doc["extra"] = extra
    try:
        write_json_atomic(folder / layout.STATUS, doc)
    except BaseException:
        if claiming:  # still queued: another process may take it
            release_claim(folder)
        raise
    if status in TERMINAL:  # the copy a damaged status.json is rebuilt from
        write_json_atomic(folder / layout.ENDED, doc, fsync=False)


def note_queued(catalogue: FileCatalogue, run_id: str, message: str) -> None:
    """Set the status message of a run that is still ``queued`` (why it waits); its
    cancel flag and claim are untouched. A run no longer queued is left as it is."""
    folder = catalogue.existing_run_dir(run_id)
    doc, _ = read_status_doc(catalogue, folder)
    if not doc or doc.get("status", "queued") != "queued":
        return
    with journal.pending(catalogue, run_id):
        write_json_atomic(folder / layout.STATUS, {**doc, "message": message})


def heartbeat(
    catalogue: FileCatalogue, run_id: str, step: int | None = None, total: int | None = None
) -> None:
    """Record that the run is alive, with its progress (``None`` keeps the last value)."""
    folder = catalogue.existing_run_dir(run_id)
    if step is None or total is None:
        old = read_optional(catalogue, folder / layout.HEARTBEAT) or {}
        step = old.get("step") if step is None else step
        total = old.get("total") if total is None else total
    doc = {
        "at": time.time(),
        "step": None if step is None else int(step),
        "total": None if total is None else int(total),
    }
    write_json_atomic(folder / layout.HEARTBEAT, doc, fsync=False)


def note_write_error(catalogue: FileCatalogue, run_id: str, message: str) -> None:
    """Record a tracker's failed write in the run's status (``extra.write_error``)."""
    folder = catalogue.existing_run_dir(run_id)
    doc, problem = read_status_doc(catalogue, folder)
    if problem:  # never rewrite a damaged status on a guess; the problem is reported
        catalogue.report_problem(f"run {run_id}: write error not recorded: {message}")
        return
    doc = doc or {"status": "running"}
    doc["extra"] = {**doc.get("extra", {}), "write_error": message, "write_error_at": time.time()}
    with journal.pending(catalogue, run_id):
        write_json_atomic(folder / layout.STATUS, doc)


def request_cancel(catalogue: FileCatalogue, run_id: str, reason: str = "") -> None:
    """Ask the run's trainer to stop (it polls ``cancel_requested``); ``reason`` starts
    its final status message (see ``cancel_reason``)."""
    path = catalogue.existing_run_dir(run_id) / layout.CANCEL
    path.write_text(json.dumps({"at": time.time(), "reason": reason}) + "\n", "utf-8")


def cancel_reason(catalogue: FileCatalogue, run_id: str) -> str:
    """The ``reason`` given to ``request_cancel`` ("" when none or unreadable)."""
    try:
        doc = json.loads((catalogue.run_dir(run_id) / layout.CANCEL).read_text("utf-8"))
    except (OSError, ValueError):
        return ""
    return str(doc.get("reason") or "") if isinstance(doc, dict) else ""


def cancel_requested(catalogue: FileCatalogue, run_id: str) -> bool:
    """Cheap enough to call every training iteration (one ``stat``)."""
    return os.path.exists(catalogue.run_dir(run_id) / layout.CANCEL)


#: A run counts as watched this long after a live page last touched its marker.
WATCHED_FOR_S = 10.0


def mark_watched(catalogue: FileCatalogue, run_id: str) -> None:
    """Say that a live page shows the run now (touches ``<run dir>/watched``)."""
    (catalogue.existing_run_dir(run_id) / layout.WATCHED).touch()  # sets the mtime


def is_watched(catalogue: FileCatalogue, run_id: str, within_s: float = WATCHED_FOR_S) -> bool:
    """Whether a live page touched the run's marker in the last ``within_s`` seconds (one
    ``stat``; wall clock, so the page and the trainer must share a clock: one host or
    synchronised hosts)."""
    try:
        touched = os.stat(catalogue.run_dir(run_id) / layout.WATCHED).st_mtime
    except OSError:
        return False
    return time.time() - touched <= within_s
