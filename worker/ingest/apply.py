"""Applying a run's numbered batches to the store, each exactly once.

The run's folder holds ``ingest.json`` (``acked``: the last batch applied). A batch
numbered at or below it is a resend and is dropped; the next one is applied, then
``acked`` is written. Its logged values go through a ``StoreTracker`` whose chunk
token names the batch, so a server killed halfway through a batch leaves chunks the
retry finds and removes before applying the batch again: no step is stored twice.
Live chunks are compacted only after ``acked`` is written, so an unacknowledged
batch's chunks are never merged away.

A side stream (a command adding to a run another process writes or wrote: ``spherescope
export-model``) is numbered apart: its ``acked`` is ``streams[<name>]`` in the same file
and its chunk tokens start with its name, so it never collides with the run's writer."""

from __future__ import annotations

import logging
import re
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
SEQ_HEX = 12  # a batch's chunk token: [its stream (8)] its number (12 hex digits) + the part (4)
STREAM = re.compile(r"^[0-9a-f]{8}$")  # a side stream's name (``db.remote.store.side_stream``)


class BadBatch(ValueError):
    """A batch the server cannot apply (unknown operation, malformed values)."""


def check_stream(stream: object) -> str:
    """``stream`` ("" for the run's writer) if well formed, else ``BadBatch``."""
    if stream == "" or (isinstance(stream, str) and STREAM.match(stream)):
        return str(stream)
    raise BadBatch(f"malformed stream name {str(stream)[:40]!r}: expected 8 hex digits")


def acked(store: RunStore, run_id: str, stream: str = "") -> int:
    doc = read_json(store.run_dir(run_id) / INGEST_FILE) or {}
    return int(doc.get("streams", {}).get(stream, 0) if stream else doc.get("acked", 0))


def _write_acked(store: RunStore, run_id: str, stream: str, seq: int) -> None:
    path = store.run_dir(run_id) / INGEST_FILE
    doc = read_json(path) or {}
    if stream:
        doc["streams"] = {**doc.get("streams", {}), stream: seq}
    else:
        doc["acked"] = seq
    write_json_atomic(path, doc)


def _token_prefix(seq: int, stream: str = "") -> str:
    return f"{stream}{seq:0{SEQ_HEX}x}"


def _remove_partial(store: RunStore, run_id: str, seq: int, stream: str = "") -> int:
    """Chunks a killed attempt at batch ``seq`` left behind (found by their token)."""
    prefix, removed = _token_prefix(seq, stream), 0
    for table in TABLES:
        folder = store.table_dir(run_id, table)
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            match = layout.CHUNK_PATTERN.match(path.name)
            token = match and match.group(2)
            if token and len(token) == len(prefix) + 4 and token.startswith(prefix):
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
    """Sent before ``end`` by clients of earlier versions; ``end`` stores the findings
    itself now (as every move into a terminal status does), so this only refreshes them."""
    from db.findings import record_findings_quietly

    record_findings_quietly(store, run_id)


def _model_export(store: RunStore, run_id: str, entry: dict) -> None:
    from db.model_exports import record_model_export

    record_model_export(store.files, run_id, entry)


STORE_OPS: dict[str, Callable[..., None]] = {
    "status": _status,
    "end": _end,
    "findings": _findings,
    "model_export": _model_export,
    "info": lambda store, run_id, info: store.update_run_info(run_id, info),
    "write_error": lambda store, run_id, message: store.note_write_error(run_id, message),
    "tags": lambda store, run_id, tags: store.set_tags(run_id, tags),
    "notes": lambda store, run_id, notes: store.set_notes(run_id, notes),
}


def apply_batches(
    store: RunStore, run_id: str, batches: list[dict[str, Any]], stream: str = ""
) -> int:
    """Apply the batches of ``stream`` that follow the last one applied, in order; the
    new ``acked``. A gap (a batch after a missing one) stops there: the client resends
    from ``acked``."""
    stream = check_stream(stream)
    done = acked(store, run_id, stream)
    applied = 0
    for batch in batches:
        seq = int(batch["seq"])
        if seq <= done:
            continue  # a resend of what the store holds
        if seq != done + 1:
            break
        _remove_partial(store, run_id, seq, stream)
        _apply(store, run_id, seq, batch["ops"], stream)
        _write_acked(store, run_id, stream, seq)
        done, applied = seq, applied + 1
        writer = not stream  # a side stream leaves the run's compaction to its writer
        if seq % COMPACT_EVERY == 0 and writer and store.get_run(run_id).status == "running":
            _compact(store, run_id)
    return done


def _apply(store: RunStore, run_id: str, seq: int, ops: list[Any], stream: str) -> None:
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
                token = f"{_token_prefix(seq, stream)}{parts:04x}"
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
