"""``RunLifecycle``: the one life of a run, in whatever process runs it.

The Celery task (``worker.execution``), ``spherescope train`` / ``analyze``
(``worker.local_run``) and the tracking SDK all wrap their work in it::

    with RunLifecycle(store, run_id, heartbeat_s=2.0) as run:
        result = run_training(config, run.tracker, run.should_stop, str(run.checkpoint_dir))
        if result.cancelled:
            run.end("cancelled", f"cancelled at step {result.steps_completed}")

Entering claims the run (``queued`` → ``running`` with host and pid; with
``accept_running=True`` also a run this process created as ``running``), starts the
heartbeat thread (so a long evaluation never looks like a dead process, see
``db.lost_runs``) and opens the run's tracker. A run that must not start raises
``RunNotStartable`` (nothing is changed, except that a queued run whose cancel flag
is set is marked ``cancelled`` first). Leaving flushes the tracker, writes the outcome
(``finished`` unless the body called ``end``; the store first stores the run's final
values and findings, ``db.catalogue.ending``), compacts the run's files, then stops the
heartbeat. An exception in the body is recorded and re-raised: ``KeyboardInterrupt``
as ``cancelled`` ("interrupted from the keyboard"), anything else as ``failed`` with
``describe_failure(error)`` (default ``failure_message``). So every path records the
same status and message for the same error.

A caller with an explicit start and end instead of a block (the SDK's ``Run``:
``spherescope.init`` ... ``run.finish()``) calls ``start()`` and ``finish(error)``,
which is what entering and leaving do.

Torch-free: it lives in ``db`` so the SDK can use it without ``worker``; it imports
one engine module, ``sphere_engine.errors``, which imports nothing.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from db import layout
from db.heartbeat import DEFAULT_HEARTBEAT_S, Heartbeat, HeartbeatStore
from db.records import TERMINAL
from db.throttle import throttled
from db.write_errors import (
    NoSpaceError,
    StoreWriteError,
    is_no_space,
    release_space,
    reserve_space,
)
from sphere_engine.errors import TrainingDivergedError

if TYPE_CHECKING:
    from db.writer_store import WriterStore, WriterTracker

log = logging.getLogger(__name__)

CANCEL_POLL_S = 0.25  # the store's cancel flag is read at most this often


class RunNotStartable(RuntimeError):
    """The run is not in a state this process may start it from; ``status`` is its status."""

    def __init__(self, run_id: str, status: str) -> None:
        super().__init__(f"run {run_id} is {status}, not queued: not running it again")
        self.status = status


def failure_message(error: BaseException) -> str:
    """The status message for a run that ended with ``error``."""
    if isinstance(error, (TrainingDivergedError, ValueError, StoreWriteError, NoSpaceError)):
        return str(error)  # already a complete sentence naming the cause (or the field)
    return f"{type(error).__name__}: {error}"


class RunLifecycle:
    """Status, heartbeat, tracker, checkpoint folder and end of one run (see module doc)."""

    def __init__(
        self,
        store: WriterStore,
        run_id: str,
        *,
        heartbeat_s: float = DEFAULT_HEARTBEAT_S,
        accept_running: bool = False,
        describe_failure: Callable[[BaseException], str] = failure_message,
        flush_interval: float = 1.0,
        heartbeat_store: HeartbeatStore | None = None,
    ) -> None:
        """``heartbeat_store``: who receives the beats (default ``store``; the SDK passes
        one that adds the latest step it saw, as its progress)."""
        self.store, self.run_id = store, run_id
        self.accept_running = accept_running
        self.describe_failure = describe_failure
        self.flush_interval = flush_interval
        self.heartbeat = Heartbeat(heartbeat_store or store, run_id, heartbeat_s)
        self.should_stop = throttled(lambda: store.cancel_requested(run_id), CANCEL_POLL_S)
        self.status = ""  # the status the run ended with, once it ended
        self._outcome: tuple[str, str, dict[str, Any]] = ("finished", "", {})
        self._tracker: WriterTracker | None = None

    @property
    def tracker(self) -> WriterTracker:
        """The run's store tracker (opened on entering)."""
        if self._tracker is None:
            raise RuntimeError(f"run {self.run_id}: the tracker exists only inside `with`")
        return self._tracker

    @property
    def checkpoint_dir(self) -> Path:
        """The run's checkpoint folder (created on first use)."""
        return self.store.checkpoint_dir(self.run_id)

    def end(self, status: str, message: str = "", **fields: Any) -> None:
        """Set the outcome written on leaving (default ``finished``); ``fields`` as for
        ``RunStore.set_status`` (``device=...``)."""
        if status not in TERMINAL:
            raise ValueError(f"end: {status!r} is not a terminal status ({sorted(TERMINAL)})")
        self._outcome = (status, message, fields)

    def reopen_tracker(self) -> WriterTracker:
        """Discard what the tracker still buffers and open a fresh one (the SDK bounds
        its memory this way while the store cannot be written)."""
        self._tracker = self.store.tracker(self.run_id, flush_interval=self.flush_interval)
        return self._tracker

    def __enter__(self) -> RunLifecycle:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.finish(error)

    def start(self) -> RunLifecycle:
        """Claim the run, start the heartbeat, open the tracker (what entering does)."""
        record = self.store.get_run(self.run_id)
        allowed = {"queued", "running"} if self.accept_running else {"queued"}
        if record.status not in allowed:
            raise RunNotStartable(self.run_id, record.status)
        if self.store.cancel_requested(self.run_id):
            self.store.set_status(self.run_id, "cancelled", "cancelled before it started")
            raise RunNotStartable(self.run_id, "cancelled")
        try:  # the claim: of processes racing for one queued run, exactly one gets here
            owner = {"host": socket.gethostname(), "pid": os.getpid()}
            if record.status == "queued":
                self.store.start_run(self.run_id, **owner)
            else:  # accept_running: this process created it running
                self.store.set_status(self.run_id, "running", **owner)
        except ValueError:  # claimed, or even ended, by another process meanwhile
            raise RunNotStartable(self.run_id, self.store.get_run(self.run_id).status) from None
        # Room to record the end even if the run fills the disk (given back on leaving).
        reserve_space(self.store.run_dir(self.run_id))
        self.heartbeat.__enter__()
        try:
            self._tracker = self.store.tracker(self.run_id, flush_interval=self.flush_interval)
        except BaseException as error:  # claimed but cannot log: it must not stay running
            self._end_after(error)
            self.heartbeat.__exit__(None, None, None)
            release_space(self.store.run_dir(self.run_id))
            raise
        return self

    def finish(self, error: BaseException | None = None) -> None:
        """End the run (what leaving does): the outcome set by ``end`` (default
        ``finished``), or, given the ``error`` that stopped the body, ``failed`` /
        ``cancelled``. Raises what failed while recording a normal end."""
        try:
            if error is None:
                self.tracker.flush()  # a failed write raises here and is recorded below
                status, message, fields = self._outcome
                self._end(status, message, **fields)
            else:
                self._end_after(error)
        except BaseException as late:
            if error is None:
                self._end_after(late)
            raise
        finally:
            self.heartbeat.__exit__(None, None, None)
            folder = self.store.run_dir(self.run_id)
            release_space(folder)
            layout.remove_empty_folders(folder, self.store.home)  # a remote writer's

    def _end_after(self, error: BaseException) -> None:
        if self._tracker is not None:
            try:
                self._tracker.flush()  # keep what was logged before the error
            except Exception as flush_error:
                log.warning("run %s: final flush failed: %s", self.run_id, flush_error)
        interrupted = isinstance(error, KeyboardInterrupt)
        status = "cancelled" if interrupted else "failed"
        message = "interrupted from the keyboard" if interrupted else self.describe_failure(error)
        try:
            self._end(status, message)
        except Exception:  # recording must never hide the run's own error
            log.exception("run %s: could not record its end (%s)", self.run_id, status)

    def _end(self, status: str, message: str, **fields: Any) -> None:
        self.status = status
        try:
            self.store.end_run(self.run_id, status, message, **fields)
        except OSError as error:  # a full disk: give the reserve back and write the end
            if not (is_no_space(error) and release_space(self.store.run_dir(self.run_id))):
                raise
            self.store.end_run(self.run_id, status, message, **fields)
