"""``RunRecord``s built from catalogue columns without per-field work up front.

A listing of every run builds tens of thousands of records, and most callers read a
few fields of each (status, name, times); decoding every run's config, run info,
status extra and executor JSON, and turning every time into a ``datetime``, was most
of a 50,000-run listing's time. A ``CataloguedRecord`` keeps those fields as stored
and decodes each on its first read (then keeps the value, so later reads cost a plain
attribute lookup and writes behave as on any record). It is a ``RunRecord``: equal to
one read from the run's folder when their fields are.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Callable, Iterator
from typing import Any

from db.records import RECORD_COLUMNS, RunRecord, to_datetime

_RAW = "_raw_"


def decode_json(text: Any) -> dict[str, Any]:
    if not isinstance(text, str) or not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def decode_time(value: Any) -> Any:
    return None if value is None or value != value else to_datetime(float(value))


class _Decoded:
    """A field kept as stored until first read (a non-data descriptor: once the
    decoded value is in the instance's ``__dict__``, reads no longer come here)."""

    def __init__(self, decode: Callable[[Any], Any]) -> None:
        self.decode = decode
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, record: Any, owner: type | None = None) -> Any:
        if record is None:
            return self
        value = self.decode(record.__dict__.pop(_RAW + self.name, None))
        record.__dict__[self.name] = value
        return value


JSON_FIELDS = ("config", "run_info", "extra", "executor")
TIME_FIELDS = ("created_at", "started_at", "finished_at", "heartbeat_at")


class CataloguedRecord(RunRecord):
    """A ``RunRecord`` whose JSON and time fields are decoded on first read."""

    config = _Decoded(decode_json)
    run_info = _Decoded(decode_json)
    extra = _Decoded(decode_json)
    executor = _Decoded(decode_json)
    created_at = _Decoded(decode_time)
    started_at = _Decoded(decode_time)
    finished_at = _Decoded(decode_time)
    heartbeat_at = _Decoded(decode_time)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunRecord):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in RECORD_COLUMNS)

    __hash__ = None  # type: ignore[assignment]  (mutable, like RunRecord)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while tens of thousands of acyclic objects are made
    (each collection would walk them all again: a third of a listing's time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def records_from_columns(columns: dict[str, list[Any]]) -> list[RunRecord]:
    """One record per row of the catalogue's columns (``db.catalogue.rows.COLUMNS``
    names, as Python lists), with ``record_of``'s defaults."""
    new = CataloguedRecord.__new__
    records: list[RunRecord] = []
    rows = zip(
        columns["run_id"],
        columns["name"],
        columns["kind"],
        columns["status"],
        columns["status_message"],
        columns["progress_step"],
        columns["progress_total"],
        columns["device"],
        columns["host"],
        columns["tags"],
        columns["notes"],
        columns["sweep_id"],
        *(columns[name] for name in TIME_FIELDS + JSON_FIELDS),
        strict=True,
    )
    for (
        run_id,
        name,
        kind,
        status,
        message,
        step,
        total,
        device,
        host,
        tags,
        notes,
        sweep_id,
        created,
        started,
        finished,
        beat,
        config,
        info,
        extra,
        executor,
    ) in rows:
        record = new(CataloguedRecord)
        record.__dict__ = {
            "run_id": run_id,
            "name": name or run_id,
            "kind": kind or "train",
            "status": status or "queued",
            "status_message": message or "",
            "progress_step": step,
            "progress_total": total,
            "device": device or "",
            "host": host or "",
            "tags": tags if tags is not None else [],  # a new list per row (Arrow)
            "notes": notes or "",
            "sweep_id": sweep_id,
            "_raw_created_at": created,
            "_raw_started_at": started,
            "_raw_finished_at": finished,
            "_raw_heartbeat_at": beat,
            "_raw_config": config,
            "_raw_run_info": info,
            "_raw_extra": extra,
            "_raw_executor": executor,
        }
        records.append(record)
    return records
