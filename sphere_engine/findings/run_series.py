"""A run's logged series as the findings read them: one pandas Series per metric key,
indexed by step (ascending), for the training batch and for the evaluations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sphere_engine.catalogue.metric import Source

_EMPTY = pd.Series([], dtype=float, index=pd.Index([], dtype="int64", name="step"))


@dataclass(frozen=True)
class RunSeries:
    """``train`` and ``evals``: metric key -> float Series indexed by step; ``config``: the
    run's configuration as a plain dict (empty for SDK runs that logged none).
    ``train_peaks``: where a long run's steps were downsampled into buckets, each bucket's
    largest value (``train`` keeps its last value, so a NaN at the end survives)."""

    train: Mapping[str, pd.Series] = field(default_factory=dict)
    evals: Mapping[str, pd.Series] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)
    train_peaks: Mapping[str, pd.Series] = field(default_factory=dict)

    def get(self, source: Source, key: str) -> pd.Series:
        """The series (empty when not logged), sorted by step."""
        table = self.train if source is Source.TRAINING_BATCH else self.evals
        series = table.get(key)
        return _EMPTY if series is None else series

    def series(self, key: str) -> pd.Series:
        return self.get(Source.TRAINING_BATCH, key)

    def eval(self, key: str) -> pd.Series:
        return self.get(Source.EVALUATION, key)

    def peak(self, key: str) -> pd.Series:
        """The training series by each logged point's largest value: a downsampled bucket
        is 0 here only when every step in it was 0 (its last value may be 0 alone)."""
        peaks = self.train_peaks.get(key)
        return self.series(key) if peaks is None else peaks

    def last_step(self) -> int | None:
        """The last step anything was logged at (what the findings are "as of")."""
        steps = [int(s.index[-1]) for s in (*self.train.values(), *self.evals.values()) if len(s)]
        return max(steps) if steps else None

    def config_value(self, dotted: str, default: Any = None) -> Any:
        value: Any = self.config
        for part in dotted.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return default
            value = value[part]
        return value

    @classmethod
    def from_long(
        cls,
        scalars: pd.DataFrame | None,
        evals: pd.DataFrame | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> RunSeries:
        """From long frames with columns name, step, value (and the buckets' max, as
        ``db.queries.metric_series`` gives them)."""
        peaks = _split(scalars, "max") if scalars is not None and "max" in scalars else {}
        return cls(_split(scalars), _split(evals), dict(config or {}), peaks)

    @classmethod
    def from_points(
        cls,
        train: Mapping[str, Any] | None = None,
        evals: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> RunSeries:
        """From ``{key: [(step, value), ...]}`` or ``{key: {step: value}}``."""
        return cls(_points(train or {}), _points(evals or {}), dict(config or {}))


def _split(frame: pd.DataFrame | None, column: str = "value") -> dict[str, pd.Series]:
    if frame is None or frame.empty:
        return {}
    out: dict[str, pd.Series] = {}
    for name, rows in frame.groupby("name", sort=False):
        series = pd.Series(
            rows[column].to_numpy(dtype=float),
            index=pd.Index(rows["step"].to_numpy(dtype=np.int64), name="step"),
        )
        out[str(name)] = series[~series.index.duplicated(keep="last")].sort_index()
    return out


def _points(data: Mapping[str, Any]) -> dict[str, pd.Series]:
    out: dict[str, pd.Series] = {}
    for key, points in data.items():
        pairs = sorted(points.items()) if isinstance(points, Mapping) else sorted(points)
        steps = np.array([int(s) for s, _ in pairs], dtype=np.int64)
        values = np.array([float(v) for _, v in pairs], dtype=float)
        out[key] = pd.Series(values, index=pd.Index(steps, name="step"))
    return out
