"""``RunLink``: one run's spool and the thread that sends it, in order, to the
ingest service. Every answer carries the run's cancel flag (read by the trainer
without a request) and acknowledges the batches the server now holds. While the
service cannot be reached the link keeps buffering on disk and retries with a
backoff; the stack meanwhile says the run is reconnecting (``db.lost_runs``). A side
stream (``stream``) carries what a later command adds to a run (a model export): its
own numbers, so it never collides with the run's writer."""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

from db.remote.client import IngestClient, IngestRefused, IngestUnreachable
from db.remote.spool import Spool

log = logging.getLogger(__name__)

MAX_POST_BYTES = 8 << 20  # batches per request (a snapshot can be a few MB alone)
BEAT_S = 2.0  # at most this long without a request (the server records it as a heartbeat)
MAX_BACKOFF_S = 5.0


class RunLink:
    def __init__(
        self, client: IngestClient, run_id: str, spool_dir: Path, stream: str = ""
    ) -> None:
        """``stream``: "" for the run's writer; a side stream's name for a command that
        adds to the run (its batches are numbered apart, and it sends no heartbeat)."""
        self.client, self.run_id, self.stream = client, run_id, stream
        self.spool = Spool(spool_dir)
        self.cancel = False
        self.cancel_reason = ""
        self.refused: str | None = None  # the server's refusal: nothing more is sent
        self.unreachable_since: float | None = None
        self._beat: dict[str, int | None] | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._sent = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=f"ingest-{run_id}", daemon=True)
        self._thread.start()

    # -- the writer's side ---------------------------------------------------------------
    def post(self, ops: list[Any]) -> None:
        """Spool one batch; the thread sends it (``IngestRefused`` once refused)."""
        if self.refused:
            raise IngestRefused(self.refused)
        self.spool.append(ops)
        self._wake.set()

    def heartbeat(self, step: int | None, total: int | None) -> None:
        self._beat = {"step": step, "total": total}
        self._wake.set()

    def drain(self, timeout_s: float) -> bool:
        """Wait until the server holds every spooled batch; False after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        self._wake.set()
        with self._sent:
            while self.spool.unacked() and not self.refused:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._sent.wait(min(left, 1.0))
        if self.refused:
            raise IngestRefused(self.refused)
        return True

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=self.client.timeout_s + 5)

    # -- the sending thread --------------------------------------------------------------
    def _run(self) -> None:
        backoff = 0.25
        while not self._stop.is_set():
            if self.unreachable_since is None:
                self._wake.wait(BEAT_S)
            self._wake.clear()
            try:
                self._send_pending()
            except IngestUnreachable as error:
                self._note_unreachable(error)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            except IngestRefused as error:
                self.refused = str(error)
                print(f"spherescope: run {self.run_id}: {error}", file=sys.stderr, flush=True)
                with self._sent:
                    self._sent.notify_all()
                return
            backoff = 0.25

    def _send_pending(self) -> None:
        """Post the pending batches (or just the heartbeat) until none is left."""
        while True:
            batches = self.spool.pending(MAX_POST_BYTES) if self.spool.unacked() else []
            beat, self._beat = self._beat, None
            # the spooled lines as they are (no second decoding and encoding)
            body = b'{"batches": [' + b",".join(batches) + b'], "heartbeat": '
            body += json.dumps(beat).encode() + b', "stream": ' + json.dumps(self.stream).encode()
            body += b"}"
            try:
                answer = self.client.call("POST", f"/runs/{self.run_id}/batches", raw=body)
            except IngestUnreachable:
                self._beat = self._beat or beat
                raise
            self.spool.ack(int(answer["acked"]))
            self.cancel = bool(answer.get("cancel"))
            self.cancel_reason = str(answer.get("cancel_reason") or "")
            if self.unreachable_since is not None:
                away = time.monotonic() - self.unreachable_since
                self.unreachable_since = None
                print(
                    f"spherescope: run {self.run_id}: reconnected to {self.client.url} "
                    f"after {away:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
            with self._sent:
                self._sent.notify_all()
            if not batches or not self.spool.unacked():
                return

    def _note_unreachable(self, error: IngestUnreachable) -> None:
        if self.unreachable_since is None:
            self.unreachable_since = time.monotonic()
            print(
                f"spherescope: run {self.run_id}: {error}; reconnecting (what it logs is "
                f"kept in {self.spool.folder} and sent once the service answers)",
                file=sys.stderr,
                flush=True,
            )
