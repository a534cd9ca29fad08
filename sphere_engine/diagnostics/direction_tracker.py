"""Tracked samples' turns: how far a fixed set of training samples turns per step.

``DirectionTracker.update`` returns a packed group (``step_transfer``): the half
turn angles and previous norms reduced on the device, or, for a small CPU set,
the previous and current raw embeddings, reduced in the host finish
(``host.half_turns``).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from sphere_engine.diagnostics.numpy_finish import (
    DIRECTION_NAMES,
    EPS,
    finish_directions,
    half_turns,
    named_rows,
)
from sphere_engine.diagnostics.step_transfer import PackedStatistics, reduces_on_host


class DirectionTracker:
    """Follows a fixed set of training samples: their norms and how far they turn.

    ``update(embeddings)`` takes the current raw embeddings of the tracked samples
    (M × d) and returns their norms, the mean angle (degrees) each turned since the
    previous call, and the ratio of that angle in the small-norm half over the
    large-norm half (halves by the norm at the previous call). ``host``: where the
    per-sample work runs (see ``reduces_on_host``): on the host, the update only keeps
    the embeddings, and both updates' embeddings go to the finish.
    """

    def __init__(self, host: bool | None = None) -> None:
        self.host = host
        self.previous: torch.Tensor | None = None  # the embeddings at the last update
        self._norms: torch.Tensor | None = None  # their norms, once computed
        self._unit: tuple[torch.Tensor, torch.Tensor] | None = None  # device: norms, directions

    @torch.no_grad()
    def update(self, embeddings: torch.Tensor) -> PackedStatistics:
        embeddings = embeddings.detach().float()
        previous, self.previous, self._norms = self.previous, embeddings, None
        count, width = embeddings.shape
        if reduces_on_host(embeddings, self.host):
            if previous is None:
                return PackedStatistics(DIRECTION_NAMES, (), _no_turn)
            raw = (previous.reshape(-1), embeddings.reshape(-1))
            finish = functools.partial(_finish_turns_host, count, width)
            return PackedStatistics(DIRECTION_NAMES, raw, finish, ("turns-host", count, width))
        norms = torch.linalg.vector_norm(embeddings, dim=1)
        directions = embeddings / norms.unsqueeze(1).clamp_min(EPS)
        previous_unit, self._unit, self._norms = self._unit, (norms, directions), norms
        if previous_unit is None:
            return PackedStatistics(DIRECTION_NAMES, (), _no_turn)
        previous_norms, previous_directions = previous_unit
        # 2·atan2(|u − v|, |u + v|) is exact for tiny angles, where acos(u·v) in
        # float32 cannot resolve anything below ~0.02°.
        gap = torch.linalg.vector_norm(directions - previous_directions, dim=1)
        total = torch.linalg.vector_norm(directions + previous_directions, dim=1)
        raw = (torch.atan2(gap, total), previous_norms)
        finish = functools.partial(_finish_turns, count)
        return PackedStatistics(DIRECTION_NAMES, raw, finish, ("directions", count))

    @property
    def norms(self) -> torch.Tensor:
        """The norms (M) of the tracked samples at the last ``update``."""
        if self.previous is None:
            raise ValueError("DirectionTracker.norms: update() has not been called yet")
        if self._norms is None:
            with torch.no_grad():
                self._norms = torch.linalg.vector_norm(self.previous, dim=1)
        return self._norms


def _finish_turns(count: int, raw: np.ndarray) -> list[dict[str, float]]:
    """K rows of M half turn angles and M previous norms → DIRECTION_NAMES."""
    return named_rows(DIRECTION_NAMES, finish_directions(raw[:, :count], raw[:, count:]))


def _finish_turns_host(count: int, width: int, raw: np.ndarray) -> list[dict[str, float]]:
    """K rows of the previous and the current M × d embeddings → DIRECTION_NAMES."""
    blocks = raw.reshape(len(raw), 2, count, width)
    half_angles, previous_norms = half_turns(blocks[:, 0], blocks[:, 1])
    return named_rows(DIRECTION_NAMES, finish_directions(half_angles, previous_norms))


_NO_TURN = dict.fromkeys(DIRECTION_NAMES, float("nan"))


def _no_turn(raw: np.ndarray) -> list[dict[str, float]]:
    """The first update: nothing to compare with yet."""
    return [dict(_NO_TURN) for _ in range(len(raw))]
