"""The tracker's columnar buffer of named values (scalars, evaluations).

Rows of (step, name, value, wall time) appended a step at a time as plain arrays, the
names interned once (a run logs the same keys every step), and turned into one Arrow
table per flush (``StoreTracker``).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa


def constant_strings(value: str, length: int) -> pa.Array:
    """``value`` ``length`` times, as a one-entry dictionary column (the run id)."""
    return pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(length, dtype=np.int32)), pa.array([value], pa.string())
    )


class NamedValues:
    """Columnar buffer of (step, name, value, wall_time) rows; names are interned."""

    def __init__(self) -> None:
        self.code_of: dict[str, int] = {}
        self.names: list[str] = []
        self._last_keys: tuple[str, ...] = ()
        self._last_codes: list[int] = []
        self.clear()

    def clear(self) -> None:
        self.steps = array("q")
        self.codes = array("i")
        self.values = array("d")
        self.walls = array("d")

    def __len__(self) -> int:
        return len(self.values)

    def add(self, values: Mapping[str, float], step: int, now: float) -> None:
        keys = tuple(values)
        if keys != self._last_keys:  # the same keys every step: intern them once
            self._last_codes = [self._code(key) for key in keys]
            self._last_keys = keys
        count = len(keys)
        before = len(self.values)
        try:
            self.values.extend(values.values())
        except TypeError:
            del self.values[before:]
            bad = {k: v for k, v in values.items() if not isinstance(v, (int, float, np.number))}
            raise ValueError(f"values must be numbers, got {bad!r}") from None
        self.codes.extend(self._last_codes)
        self.steps.extend([step] * count)
        self.walls.extend([now] * count)

    def _code(self, name: Any) -> int:
        code = self.code_of.get(name)
        if code is None:
            if not isinstance(name, str) or not name:
                raise ValueError(f"metric name must be a non-empty string, got {name!r}")
            code = self.code_of[name] = len(self.names)
            self.names.append(name)
        return code

    def to_arrow(self, run_id: str) -> pa.Table:
        codes = pa.array(np.frombuffer(self.codes, dtype=np.int32))
        return pa.table(
            {
                "run_id": constant_strings(run_id, len(self)),
                "step": pa.array(np.frombuffer(self.steps, dtype=np.int64)),
                "name": pa.DictionaryArray.from_arrays(codes, pa.array(self.names, pa.string())),
                "value": pa.array(np.frombuffer(self.values, dtype=np.float64)),
                "wall_time": pa.array(np.frombuffer(self.walls, dtype=np.float64)),
            }
        )
