"""A run's data-parallel job: what the ranks tell each other beside the statistics.

Rank 0 owns the run (the only process that touches the SphereScope store); the other
ranks reach it through the job's own rendezvous store (``torch.distributed``'s c10d
store, reachable from every node): a rank that fails writes its error there, and each
rank beats a counter there. Rank 0 watches both on a daemon thread and ends the run
``failed`` with which rank and why, even while its own main thread is blocked in a
collective with the dead rank. A SIGTERM to rank 0 (torchrun and ``mp.spawn`` stop
every rank when one fails) is raised as ``RankFailed`` in its main thread, naming the
rank that failed when it is known, so ``with`` blocks record it.

A job restarted under the same ``TORCHELASTIC_RUN_ID`` (``torchrun --max_restarts``, or
a requeued job with the same ``--rdzv_id``) continues the run an earlier attempt
started, unless that run finished.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from db.records import RunRecord
from db.writer_store import WriterStore
from sphere_engine.distributed import DistributedContext

log = logging.getLogger(__name__)

RECORD_KEY = "spherescope_distributed"  # in the run's config: how the job logged
ELASTIC_ID_ENV = "TORCHELASTIC_RUN_ID"
SILENCE_BEATS = 5  # a rank silent this many heartbeat intervals (and >= 10 s) stopped
JOIN_TIMEOUT_S = 5.0  # how long ending a run waits for its side channel's thread


class RankFailed(RuntimeError):
    """Another rank of the job failed or stopped (raised on rank 0)."""


def job_record(ctx: DistributedContext, scope: str, launcher: str | None) -> dict[str, Any]:
    """What the run's config records about the job (shown and compared with it)."""
    record: dict[str, Any] = {
        "world_size": ctx.world_size,
        "scope": scope,
        "launcher": launcher or ctx.source,
        "backend": ctx.backend,
    }
    if os.environ.get(ELASTIC_ID_ENV, "none") != "none":
        record["elastic_run_id"] = os.environ[ELASTIC_ID_ENV]
    return record


def elastic_run(store: WriterStore) -> RunRecord | None:
    """The unfinished run an earlier attempt of this elastic job started; else None."""
    elastic_id = os.environ.get(ELASTIC_ID_ENV, "")
    if elastic_id in ("", "none"):  # torchrun without a rendezvous id: every job is "none"
        return None
    for record in store.list_runs(kind="external"):  # newest first
        if (record.config.get(RECORD_KEY) or {}).get("elastic_run_id") == elastic_id:
            return record if record.status != "finished" else None
    return None


def resume(store: WriterStore, record: RunRecord) -> None:
    """Make an ended run of this elastic job startable again (its lifecycle claims it)."""
    if record.status in ("failed", "cancelled", "lost"):
        store.set_status(record.run_id, "queued", "resumed by an elastic restart")


class JobLink:
    """The side channel between the ranks of one run (see the module doc)."""

    def __init__(self, ctx: DistributedContext, run_id: str, interval_s: float) -> None:
        self.ctx, self.interval_s = ctx, interval_s
        self.store = _job_store(run_id)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen: dict[int, tuple[int, float]] = {}  # rank -> (last beat, when it changed)

    def start(self, on_peer_failure: Callable[[str], None]) -> None:
        """Beat (every rank) and, on rank 0, watch the other ranks."""
        if self.store is None:
            return
        target = self._watch if self.ctx.is_main else self._beat
        self._thread = threading.Thread(
            target=target, args=(on_peer_failure,), name="spherescope-job", daemon=True
        )
        self._thread.start()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        """Stop the thread and wait for it (unless called from it), then let go of the
        store. The thread spends its time in c10d store calls, which release the GIL: one
        still under way when the interpreter tears down (a rank exits right after its
        run ends) cannot take the GIL back and unwinds through C++ frames that forbid it,
        and torch (2.13) aborts the process ("terminate called without an active
        exception", SIGABRT; a quarter of 2-rank torchrun jobs)."""
        self._stop.set()
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return
        thread.join(JOIN_TIMEOUT_S)
        if not thread.is_alive():  # else a store call hangs: the store is gone anyway
            self._thread, self.store = None, None

    def report_failure(self, message: str) -> None:
        """A rank other than 0 failed: tell rank 0 (best effort: the store may be gone)."""
        if self.store is not None:
            with contextlib.suppress(Exception):
                self.store.set(f"failed/{self.ctx.rank}", message)
        self.stop()

    def peer_failure(self) -> str | None:
        """Which other rank failed or went silent, and why; None when all seem alive."""
        store = self.store
        if store is None:
            return None
        now = time.monotonic()
        silence = max(SILENCE_BEATS * self.interval_s, 10.0)
        for rank in range(1, self.ctx.world_size):
            try:
                if store.check([f"failed/{rank}"]):
                    return f"rank {rank} failed: {store.get(f'failed/{rank}').decode()}"
                beat = store.add(f"alive/{rank}", 0)
            except Exception:  # the rendezvous store itself is gone
                return None
            last, since = self._seen.get(rank, (-1, now))
            if beat != last:
                self._seen[rank] = (beat, now)
            elif beat > 0 and now - since > silence:
                return f"rank {rank} stopped: no sign of life for {now - since:.0f} s"
        return None

    def _beat(self, _: Callable[[str], None]) -> None:
        store = self.store
        assert store is not None
        while not self._stop.is_set():
            with contextlib.suppress(Exception):
                store.add(f"alive/{self.ctx.rank}", 1)
            self._stop.wait(self.interval_s)

    def _watch(self, on_peer_failure: Callable[[str], None]) -> None:
        while not self._stop.wait(self.interval_s):
            found = self.peer_failure()
            if found is not None and not self._stop.is_set():
                on_peer_failure(found)
                return


def on_sigterm(link: JobLink) -> Callable[[], None]:
    """Raise SIGTERM as ``RankFailed`` in the main thread; returns the undo. Only where
    the default handler is in place (a framework's own handler is left alone)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return lambda: None

    def handler(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process
        cause = link.peer_failure()
        stopped = f"rank {link.ctx.rank} stopped by SIGTERM"
        why = cause or "the launcher stops every rank when one fails"
        raise RankFailed(f"{stopped} ({why})")

    signal.signal(signal.SIGTERM, handler)

    def undo() -> None:  # from the main thread only (the watcher leaves it in place)
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is handler:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return undo


def _job_store(run_id: str) -> Any:
    """The job's rendezvous store under a prefix of this run; None when there is none."""
    import torch.distributed as dist

    try:
        base = dist.distributed_c10d._get_default_store()
    except Exception as error:  # initialised without a store (rare): no side channel
        log.debug("no rendezvous store for the job's side channel: %s", error)
        return None
    return dist.PrefixStore(f"spherescope/{run_id}/", base)
