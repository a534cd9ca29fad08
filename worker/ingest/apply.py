"""Applying a run's numbered batches to the store, each exactly once.

The run's folder holds ``ingest.json`` (``acked``: the last batch applied). A batch
numbered at or below it is a resend and is dropped; the next one is applied, then
``acked`` is written. Its logged values go through a ``StoreTracker`` whose chunk
token names the batch, so a server killed halfway through a batch leaves chunks the
retry finds and removes before applying the batch again: no step is stored twice.
Live chunks are compacted only after ``acked`` is written, so an unacknowledged
batch's chunks are never merged away."""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from db import layout
from db.atomic import read_json, write_json_atomic
from db.remote.wire import decode
from db.schema import TABLES
from db.store import RunStore
from db.tracker import StoreTracker

log = logging.getLogger(__name__)

INGEST_FILE = "ingest.json"
COMPACT_EVERY = 30  # batches between two compactions of a live run's chunks
SEQ_HEX = 12  # a batch's chunk token: its number (12 hex digits) + the part (4)


def acked(store: RunStore, run_id: str) -> int:
    doc = read_json(store.run_dir(run_id) / INGEST_FILE) or {}
    return int(doc.get("acked", 0))


def _token_prefix(seq: int) -> str:
    return f"{seq:0{SEQ_HEX}x}"


def _remove_partial(store: RunStore, run_id: str, seq: int) -> int:
    """Chunks a killed attempt at batch ``seq`` left behind (found by their token)."""
    prefix, removed = _token_prefix(seq), 0
    for table in TABLES:
        folder = store.table_dir(run_id, table)
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            match = layout.CHUNK_PATTERN.match(path.name)
            if match and len(match.group(2)) == SEQ_HEX + 4 and match.group(2).startswith(prefix):
                path.unlink(missing_ok=True)
                removed += 1
    return removed


def _tracker_op(method: str) -> Callable[..., None]:
    return lambda tracker, *args: getattr(tracker, method)(*args)


def _query_results(tracker: StoreTracker, queries: dict, classes: dict, step: int) -> None:
    tracker.track_query_results(SimpleNamespace(queries=queries, classes=classes), step)


TRACKER_OPS: dict[str, Callable[..., None]] = {
    "scalars": _tracker_op("track_many"),
    "norms": _tracker_op("track_sample_norms"),
    "eval": _tracker_op("track_eval"),
    "curve": _tracker_op("track_curve"),
    "snapshot": _tracker_op("track_snapshot"),
    "snapshot_samples": _tracker_op("track_snapshot_samples"),
    "query_results": _query_results,
    "thumbnails": _tracker_op("track_thumbnails"),
    "checkpoint": _tracker_op("track_checkpoint"),
    "progress": _tracker_op("track_progress"),
}


def _status(store: RunStore, run_id: str, status: str, message: str, fields: dict) -> None:
    store.set_status(run_id, status, message, **fields, remote=True)


def _end(store: RunStore, run_id: str, status: str, message: str, fields: dict) -> None:
    store.end_run(run_id, status, message, **fields)


def _findings(store: RunStore, run_id: str) -> None:
    from db.findings import record_findings_quietly

    record_findings_quietly(store, run_id)


STORE_OPS: dict[str, Callable[..., None]] = {
    "status": _status,
    "end": _end,
    "findings": _findings,
    "info": lambda store, run_id, info: store.update_run_info(run_id, info),
    "write_error": lambda store, run_id, message: store.note_write_error(run_id, message),
    "tags": lambda store, run_id, tags: store.set_tags(run_id, tags),
    "notes": lambda store, run_id, notes: store.set_notes(run_id, notes),
}


class BadBatch(ValueError):
    """A batch the server cannot apply (unknown operation, malformed values)."""


def apply_batches(store: RunStore, run_id: str, batches: list[dict[str, Any]]) -> int:
    """Apply the batches that follow the last one applied, in order; the new ``acked``.
    A gap (a batch after a missing one) stops there: the client resends from ``acked``."""
    done = acked(store, run_id)
    applied = 0
    for batch in batches:
        seq = int(batch["seq"])
        if seq <= done:
            continue  # a resend of what the store holds
        if seq != done + 1:
            break
        _remove_partial(store, run_id, seq)
        _apply(store, run_id, seq, batch["ops"])
        write_json_atomic(store.run_dir(run_id) / INGEST_FILE, {"acked": seq})
        done, applied = seq, applied + 1
        if seq % COMPACT_EVERY == 0 and store.get_run(run_id).status == "running":
            _compact(store, run_id)
    return done


def _apply(store: RunStore, run_id: str, seq: int, ops: list[Any]) -> None:
    tracker: StoreTracker | None = None
    parts = 0

    def flush() -> None:
        nonlocal tracker
        if tracker is not None:
            tracker.flush()
            tracker = None

    for op in ops:
        if not isinstance(op, list) or not op or not isinstance(op[0], str):
            raise BadBatch(f"batch {seq}: malformed operation {str(op)[:80]!r}")
        name, args = op[0], decode(op[1:])
        if name in TRACKER_OPS:
            if tracker is None:
                token = f"{_token_prefix(seq)}{parts:04x}"
                tracker = store.tracker(run_id, float("inf"), compact_every=0, token=token)
                parts += 1
            TRACKER_OPS[name](tracker, *args)
        elif name in STORE_OPS:
            flush()  # values logged before a status change are stored before it
            try:
                STORE_OPS[name](store, run_id, *args)
            except ValueError as error:  # e.g. a transition the status rules refuse
                log.warning("run %s: batch %d: %s not applied: %s", run_id, seq, name, error)
        else:
            raise BadBatch(f"batch {seq}: unknown operation {name!r}")
    flush()


def _compact(store: RunStore, run_id: str) -> None:
    from db.compaction import CompactionBusy

    try:
        store.compact(run_id, full=False, wait=False)
    except CompactionBusy:
        pass
    except Exception as error:  # chunks stay readable; the next cadence retries
        store.report_problem(f"run {run_id}: compaction failed: {error}")
