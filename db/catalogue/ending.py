"""What a run's end stores with it, whichever path ends it: its key final values
(``final_values``) and its findings (``db.findings``), written to its run info before
its terminal status, inside the same catalogue step, so the row written with the
status (and any rebuild from the folder) carries them.

Every move into a terminal status goes through ``db.run_status``, which calls
``record_ending``: the run's own process (``RunStore.end_run``), the reaper marking it
``lost``, a Celery parent marking it failed, a cancel before it started, a SLURM state.

Reading the values starts DuckDB (and pandas, for the findings). A process that forks
children afterwards (a Celery worker's main process, where the reaper runs) must not
start DuckDB's threads, so it calls ``read_in_subprocess()`` once: its endings are
then read and stored by a fresh interpreter (``python -m db.catalogue.ending``) started
after the status is written, which writes the run's catalogue row again when done. The
status is not held back for them: reading a long run's values takes seconds (more on a
busy machine), and a reaper that waited for them would mark the next lost run late.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from db.file_catalogue import FileCatalogue

log = logging.getLogger(__name__)

#: A subprocess reading one run's ending is given this long (a reaper must not hang).
SUBPROCESS_TIMEOUT_S = 300.0

_isolated = 0  # the pid of the process that reads its endings in a subprocess
_findings: Callable[[FileCatalogue, str], None] | None = None


def read_in_subprocess(isolated: bool = True) -> None:
    """Read this process's run endings in a fresh interpreter from now on (a process
    that forks children must never start DuckDB's thread pools). Its forked children
    (a worker's pool processes, which run the runs) still read their own inline."""
    global _isolated
    _isolated = os.getpid() if isolated else 0


def in_background() -> bool:
    """Whether this process's endings are read after its status change, by a fresh
    interpreter (``read_in_subprocess``), rather than before it, inline."""
    return _isolated == os.getpid()


def record_ending(catalogue: FileCatalogue, run_id: str, *, findings: bool = True) -> None:
    """Store the run's final values (and, with ``findings``, its findings) in its info:
    inline, or (``in_background()``) in a fresh interpreter that also writes the run's
    catalogue row again once they are stored. Never fails the status change that calls
    it: problems are logged."""
    if in_background():
        _in_subprocess(catalogue, run_id, findings)
        return
    _inline(catalogue, run_id, findings)


def register_findings(recorder: Callable[[FileCatalogue, str], None]) -> None:
    """Who stores a run's findings at its end: ``db.findings``, which reads through the
    store facade above this module, so the ``db`` package wires it in."""
    global _findings
    _findings = recorder


def _inline(catalogue: FileCatalogue, run_id: str, findings: bool) -> None:
    from db.catalogue.final_values import record_final_values

    record_final_values(catalogue, run_id)
    if findings and _findings is not None:
        _findings(catalogue, run_id)


def _in_subprocess(catalogue: FileCatalogue, run_id: str, findings: bool) -> None:
    command = [sys.executable, "-m", "db.catalogue.ending", str(catalogue.home), run_id]
    if not findings:
        command.append("--no-findings")
    try:  # its errors go where this process's go (the worker's log)
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    except OSError as error:
        log.warning("run %s: final values and findings not stored: %s", run_id, error)
        return
    threading.Thread(target=_await, args=(child, run_id), daemon=True).start()


def _await(child: subprocess.Popen, run_id: str) -> None:
    """Collect the child (no zombie), kill it past its time, log that it failed."""
    try:
        child.wait(timeout=SUBPROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    if child.returncode != 0:
        log.warning("run %s: final values and findings not stored (exit %s)", run_id,
                    child.returncode)  # fmt: skip


def main(argv: list[str]) -> int:
    home, run_id, *rest = argv
    # the module as imported (run as ``__main__`` this is another copy, not the one
    # the ``db`` package wired the findings into)
    from db.catalogue import ending, journal
    from db.catalogue.rows import row_of

    catalogue = FileCatalogue(Path(home))
    ending._inline(catalogue, run_id, findings="--no-findings" not in rest)
    with journal.pending(catalogue, run_id):  # the row again, with what was just stored
        journal.write_delta(catalogue, row_of(catalogue, run_id))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
