"""``RemoteStore``: the writer's surface of ``db.store.RunStore`` over the ingest service.

A run's start needs answers (its id, its claim, its record) and waits for the service
(``IngestClient.call_patiently``); everything after it is spooled on this machine and
sent in order by the run's ``RunLink``: status changes, run info, logged values,
findings, the end. The trainer reads its cancel flag from the link's last answer.
``run_dir`` / ``checkpoint_dir`` are folders on this side (under ``home``): checkpoints
and the run's log stay with the writer; the run's record says where (``host``)."""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from db import layout
from db.records import TERMINAL, RunRecord
from db.remote.client import IngestClient, IngestRefused
from db.remote.link import RunLink
from db.remote.tracker import RemoteTracker
from db.remote.wire import encode, record_from_json

log = logging.getLogger(__name__)

START_WAIT_ENV = "SPHERESCOPE_CONNECT_WAIT_S"  # how long a run's start waits for the service
DRAIN_WAIT_ENV = "SPHERESCOPE_DRAIN_WAIT_S"  # how long a run's end waits for its spool
SPOOL = "spool"
STREAM_SEP = "."  # <spool>/<run id>.<stream>: a side stream's spool (run ids have no ".")


def side_stream() -> str:
    """A fresh side-stream name (8 hex digits: it also names the chunks it writes)."""
    return secrets.token_hex(4)


def _seconds(env: str, default: float) -> float:
    raw = os.environ.get(env, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        raise ValueError(f"{env} must be a number of seconds, got {raw!r}") from None


class RemoteStore:
    """Writes runs into the stack's store at ``url`` (see module doc)."""

    def __init__(self, url: str, token: str, home: str | os.PathLike[str] | None = None) -> None:
        self.client = IngestClient(url, token)
        self.url = self.client.url
        self.home = layout.resolve_home(home)
        self._links: dict[str, RunLink] = {}
        self._trackers: dict[str, RemoteTracker] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RemoteStore({self.url!r}, local={str(self.home)!r})"

    # -- this side's folders ---------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        return layout.ensure_folder(self.home / "runs" / layout.check_run_id(run_id))

    def checkpoint_dir(self, run_id: str) -> Path:
        folder = self.run_dir(run_id) / "checkpoints"
        folder.mkdir(exist_ok=True)
        return folder

    def link(self, run_id: str, stream: str = "") -> RunLink:
        """The run's link: its writer's (``stream`` "") or a side stream's (a command that
        adds to a run another process wrote, numbered apart from it: ``side_stream``)."""
        folder = layout.check_run_id(run_id) + (f"{STREAM_SEP}{stream}" if stream else "")
        with self._lock:
            if folder not in self._links:
                spool = self.home / SPOOL / folder
                self._links[folder] = RunLink(self.client, run_id, spool, stream)
            return self._links[folder]

    # -- answers a run's start needs -------------------------------------------------------
    def create_run(
        self,
        config: Mapping[str, Any],
        name: str | None = None,
        *,
        kind: str = "train",
        tags: Iterable[str] = (),
        sweep_id: str | None = None,
        status: str = "queued",
        project: str | None = None,
    ) -> str:
        body = {
            "config": encode(dict(config)),
            "name": name,
            "kind": kind,
            "tags": list(tags),
            "sweep_id": sweep_id,
            "status": status,
            "project": project,
        }
        answer = self.client.call_patiently("POST", "/runs", body, self._start_wait())
        run_id = str(answer["run_id"])
        if status == "running":
            self.link(run_id)  # its heartbeats start now
        return run_id

    def get_run(self, run_id: str) -> RunRecord:
        try:
            doc = self.client.call_patiently("GET", f"/runs/{run_id}", None, self._start_wait())
        except IngestRefused as error:
            raise ValueError(str(error)) from None
        return record_from_json(doc)

    def list_runs(
        self, *, status: str | Sequence[str] | None = None, kind: str | None = None, **_: Any
    ) -> list[RunRecord]:
        statuses = [status] if isinstance(status, str) else list(status or [])
        body = {"status": statuses, "kind": kind}
        docs = self.client.call_patiently("POST", "/runs/list", body, self._start_wait())
        return [record_from_json(doc) for doc in docs]

    def start_run(self, run_id: str, **fields: Any) -> None:
        """Claim a queued run (``ValueError`` when another process has it)."""
        try:
            self.client.call_patiently(
                "POST", f"/runs/{run_id}/claim", encode(fields), self._start_wait()
            )
        except IngestRefused as error:
            raise ValueError(str(error)) from None
        self.link(run_id)

    def write_executor(self, run_id: str, record: Mapping[str, Any]) -> None:
        """Where the run was submitted (``db.scheduler_record``), recorded on the stack."""
        self.client.call_patiently("POST", f"/runs/{run_id}/executor", encode(dict(record)))

    def delete_run(self, run_id: str) -> None:
        """Remove a run that never started (a job the scheduler refused)."""
        self.client.call_patiently("POST", f"/runs/{run_id}/delete", {})

    def exists(self, run_id: str) -> bool:
        return True  # the server says otherwise by refusing the run's batches

    # -- spooled, in order -----------------------------------------------------------------
    def set_status(self, run_id: str, status: str, message: str = "", **fields: Any) -> None:
        self._post(run_id, ["status", status, message, encode(fields)])

    def end_run(self, run_id: str, status: str, message: str = "", **fields: Any) -> None:
        """The end, then wait (``SPHERESCOPE_DRAIN_WAIT_S``, default 600 s) until the
        service holds all of the run (then the spool is removed); what it cannot take
        yet stays in the spool."""
        if status not in TERMINAL:
            raise ValueError(f"end_run: {status!r} is not a terminal status ({sorted(TERMINAL)})")
        link = self.link(run_id)
        self._post(run_id, ["end", status, message, encode(fields)])
        self._settle(link)

    def _settle(self, link: RunLink) -> None:
        """Wait (``SPHERESCOPE_DRAIN_WAIT_S``, default 600 s) until the service holds all
        the link sent, then remove its spool; what it cannot take yet stays there
        (``spherescope sync`` sends it)."""
        drained = link.drain(_seconds(DRAIN_WAIT_ENV, 600.0))
        link.close()
        if drained:  # the stack holds all of it: the spool has done its job
            shutil.rmtree(link.spool.folder, ignore_errors=True)
            layout.remove_empty_folders(link.spool.folder.parent, self.home)
            return
        print(
            f"spherescope: run {link.run_id}: {link.spool.unacked()} batch(es) not yet "
            f"accepted by {self.url}; they stay in {link.spool.folder}",
            file=sys.stderr,
        )

    # -- what a command adds to a run it did not write (``spherescope export-model``) ------
    def record_model_export(self, run_id: str, entry: Mapping[str, Any]) -> None:
        """Append ``entry`` to the run's model exports on the stack (``db.model_exports``),
        spooled in a side stream of its own and sent before returning (or left in the
        spool for ``spherescope sync``)."""
        stream = side_stream()
        link = self.link(run_id, stream)
        link.post([["model_export", encode(dict(entry))]])
        self._settle(link)
        with self._lock:
            self._links.pop(f"{run_id}{STREAM_SEP}{stream}", None)

    def checkpoints(self, run_id: str) -> list[tuple[int, str]]:
        """The run's recorded checkpoints as (step, path on its writer's side)."""
        doc = self._read(f"/runs/{run_id}/checkpoints")
        return [(int(step), str(path)) for step, path in zip(doc["step"], doc["path"], strict=True)]

    def evaluations(self, run_id: str) -> list[tuple[int, str, float]]:
        """The run's evaluation metrics as (step, name, value); NaN where none."""
        doc = self._read(f"/runs/{run_id}/evaluations")
        values = [float("nan") if value is None else float(value) for value in doc["value"]]
        return list(zip(map(int, doc["step"]), map(str, doc["name"]), values, strict=True))

    def _read(self, path: str) -> Any:
        try:
            return self.client.call_patiently("GET", path, None, self._start_wait())
        except IngestRefused as error:
            raise ValueError(str(error)) from None

    def update_run_info(self, run_id: str, info: Mapping[str, Any]) -> None:
        self._post(run_id, ["info", encode(dict(info))])

    def note_write_error(self, run_id: str, message: str) -> None:
        self._post(run_id, ["write_error", message])

    def set_tags(self, run_id: str, tags: Iterable[str]) -> None:
        self._post(run_id, ["tags", list(tags)])

    def set_notes(self, run_id: str, notes: str) -> None:
        self._post(run_id, ["notes", notes])

    def heartbeat(self, run_id: str, step: int | None = None, total: int | None = None) -> None:
        self.link(run_id).heartbeat(step, total)

    def tracker(self, run_id: str, flush_interval: float = 1.0, **_: Any) -> RemoteTracker:
        self._trackers[run_id] = RemoteTracker(self, run_id, flush_interval)
        return self._trackers[run_id]

    # -- read from the last answer ---------------------------------------------------------
    def cancel_requested(self, run_id: str) -> bool:
        return self.link(run_id).cancel

    def cancel_reason(self, run_id: str) -> str:
        return self.link(run_id).cancel_reason

    def is_watched(self, run_id: str) -> bool:
        return False

    def report_problem(self, message: str) -> None:
        log.warning("%s", message)

    def send_leftovers(self, wait_s: float) -> dict[str, int]:
        """Send the spools earlier processes left here (their end came while the stack
        could not be reached); those the stack now holds are removed. Per run: the
        batches still unsent."""
        left = {}
        folders = sorted((self.home / SPOOL).glob("*")) if (self.home / SPOOL).is_dir() else []
        for folder in folders:
            run_id, _, stream = folder.name.partition(STREAM_SEP)
            link = self.link(run_id, stream)
            drained = link.drain(wait_s) if link.spool.unacked() else True
            link.close()
            if drained:
                shutil.rmtree(folder, ignore_errors=True)
            left[run_id] = left.get(run_id, 0) + link.spool.unacked()
        layout.remove_empty_folders(self.home / SPOOL, self.home)
        return left

    def _post(self, run_id: str, op: list[Any]) -> None:
        """One operation after what the run's tracker still holds (order kept)."""
        tracker = self._trackers.get(run_id)
        held = tracker.take_ops() if tracker is not None else []
        self.link(run_id).post([*held, op])

    def _start_wait(self) -> float:
        return _seconds(START_WAIT_ENV, 60.0)
