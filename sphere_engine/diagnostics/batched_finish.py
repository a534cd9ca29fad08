"""Logged steps waiting for their host finish, finished K at a time.

Each logged step's raw values reach the host in one transfer (``StepStatistics.transfer``,
the step's sync point) as a ``HostStep``. Finishing them (``numpy_finish``) costs
mostly NumPy call overhead on a few dozen numbers, and the finished values only reach
the store at the tracker's flush anyway, so ``PendingStatistics`` keeps the raw rows and
finishes them together: rows of one layout stacked into a K × W matrix, one set of NumPy
calls for all of them. A step of another layout (a smaller last batch) is its own stack.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class HostStep:
    """One logged step's raw values on the host (float32, as they left the device), not
    yet finished (in float64)."""

    groups: Sequence[Any]  # the step's PackedStatistics, in ``raw`` order
    raw: np.ndarray
    sample_norms: np.ndarray
    # when the step happened: its values reach the tracker up to ~0.5 s later, and the
    # store's wall_time (the dashboard's wall-clock axis, its lag) must be the step's
    wall_time: float = field(default_factory=time.time)

    @property
    def layout(self) -> tuple[Any, ...]:
        return tuple(group.layout for group in self.groups)

    def result(self) -> HostStep:
        """Itself: a ``HostStep`` is already on the host (``PendingTransfer.result``
        waits for one)."""
        return self

    def raw_value(self, name: str) -> float:
        """A value that needs no finish (e.g. ``loss/total``), read from the raw row."""
        start = 0
        for group in self.groups:
            if group.finish is None and name in group.names:
                return float(self.raw[start + group.names.index(name)])
            start += group.size
        raise KeyError(name)


@dataclass
class StepRecord:
    """One finished logged step: its statistics and the tracked samples' norms."""

    step: int
    values: dict[str, float]
    sample_ids: list[int] = field(default_factory=list)
    sample_norms: list[float] = field(default_factory=list)
    wall_time: float | None = None  # when the step happened (Unix seconds)


def finish_steps(steps: Sequence[HostStep]) -> list[dict[str, float]]:
    """The logged values of each step, in order (a name added twice keeps its last value)."""
    results: list[dict[str, float]] = [{} for _ in steps]
    by_layout: dict[tuple[Any, ...], list[int]] = {}
    for index, step in enumerate(steps):
        by_layout.setdefault(step.layout, []).append(index)
    with np.errstate(all="ignore"):  # NaN/inf of a diverging run are values (gaps)
        for indices in by_layout.values():
            matrix = np.stack([steps[i].raw for i in indices]).astype(np.float64, copy=False)
            start = 0
            for group in steps[indices[0]].groups:
                end = start + group.size
                for index, values in zip(
                    indices, group.host_rows(matrix[:, start:end]), strict=True
                ):
                    results[index].update(values)
                start = end
    return results


# (step, its raw values or their transfer, values known at once, tracked sample ids) of
# a waiting step; ``result()`` gives the ``HostStep`` either way
WaitingStep = tuple[int, Any, dict[str, float], list[int]]


class PendingStatistics:
    """Raw logged steps awaiting their batched finish: ``due()`` once ``max_steps`` wait
    or the oldest has waited ``max_age_s``; ``finish()`` returns them as ``StepRecord``s
    in step order and empties the buffer (``take()`` returns them unfinished)."""

    def __init__(
        self,
        max_steps: int = 32,
        max_age_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_steps, self.max_age_s, self.clock = max_steps, max_age_s, clock
        self._steps: list[WaitingStep] = []
        self._oldest = 0.0
        self.last: StepRecord | None = None  # the last step finished

    def __len__(self) -> int:
        return len(self._steps)

    def add(
        self,
        step: int,
        host: Any,
        extra: dict[str, float] | None = None,
        sample_ids: list[int] | None = None,
    ) -> None:
        """``host``: a ``HostStep``, or a ``PendingTransfer`` waited for at the finish;
        ``extra``: values known at once (lr, step time), logged after the finished ones."""
        if not self._steps:
            self._oldest = self.clock()
        self._steps.append((step, host, extra or {}, sample_ids or []))

    def due(self) -> bool:
        return bool(self._steps) and (
            len(self._steps) >= self.max_steps or self.clock() - self._oldest >= self.max_age_s
        )

    def take(self) -> list[WaitingStep]:
        """The waiting steps, unfinished, in step order; empties the buffer (the SDK
        finishes them on its writer thread with ``finish_waiting``)."""
        taken, self._steps = self._steps, []
        return taken

    def finish(self) -> list[StepRecord]:
        records = finish_waiting(self.take())
        if records:
            self.last = records[-1]
        return records


def finish_waiting(waiting: Sequence[WaitingStep]) -> list[StepRecord]:
    """The ``StepRecord``s of steps taken from a ``PendingStatistics``, in step order."""
    if not waiting:
        return []
    hosts = [host.result() for _, host, _, _ in waiting]
    finished = finish_steps(hosts)
    records = []
    for (step, _, extra, ids), host, values in zip(waiting, hosts, finished, strict=True):
        values.update(extra)
        norms = host.sample_norms.tolist() if ids else []
        records.append(StepRecord(step, values, ids, norms, host.wall_time))
    return records
