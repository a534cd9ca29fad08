"""The ingest wire format: JSON, with numpy arrays as base64 ``.npy`` (never pickles:
the server decodes what any client sends)."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

ARRAY_KEY = "__ndarray__"


def encode(value: Any) -> Any:
    """``value`` with every numpy array (and numpy scalar) made JSON-plain."""
    if isinstance(value, np.ndarray):
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(value), allow_pickle=False)
        return {ARRAY_KEY: base64.b64encode(buffer.getvalue()).decode("ascii")}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(key): encode(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(item) for item in value]
    return value


def decode(value: Any) -> Any:
    """The inverse of ``encode`` (tuples come back as lists)."""
    if isinstance(value, dict):
        if set(value) == {ARRAY_KEY}:
            raw = base64.b64decode(value[ARRAY_KEY], validate=True)
            return np.load(io.BytesIO(raw), allow_pickle=False)
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item) for item in value]
    return value


def record_to_json(record: Any) -> dict[str, Any]:
    """A ``db.records.RunRecord`` as JSON (times as epoch seconds)."""
    from dataclasses import asdict
    from datetime import datetime

    from db.json_plain import json_plain

    doc = asdict(record)
    for key, value in doc.items():
        if isinstance(value, datetime):
            doc[key] = value.timestamp()
    return json_plain(doc)


def record_from_json(doc: dict[str, Any]) -> Any:
    """The ``RunRecord`` of ``record_to_json``'s output (unknown keys ignored)."""
    from dataclasses import fields

    from db.records import RunRecord, to_datetime

    names = {f.name for f in fields(RunRecord)}
    values = {key: value for key, value in doc.items() if key in names}
    for key in ("created_at", "started_at", "finished_at", "heartbeat_at"):
        values[key] = to_datetime(values.get(key))
    return RunRecord(**values)
