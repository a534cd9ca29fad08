"""The progress display of ``spherescope train`` on stderr.

On a terminal: a tqdm bar (steps, rate, elapsed, ETA, latest loss and norm variance),
redrawn in place. Anywhere else (a log file, a pipe, CI): plain lines, one every few
seconds and one at the end, never carriage-return frames that a log file would keep.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping
from typing import TextIO

from tqdm import tqdm

from sphere_engine.tracking import BaseTracker

PLAIN_EVERY_S = 5.0  # seconds between two plain progress lines


class ProgressBar(BaseTracker):
    """Shows training progress on ``stream`` (default stderr); see module doc."""

    def __init__(self, stream: TextIO | None = None, plain_every_s: float = PLAIN_EVERY_S) -> None:
        self.stream = stream or sys.stderr
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self.plain_every_s = plain_every_s
        self.loss = math.nan
        self.norm_var = math.nan
        self.started = time.monotonic()
        self.last_line = -math.inf
        self.bar: tqdm | None = None

    def track_many(
        self, values: Mapping[str, float], step: int, wall_time: float | None = None
    ) -> None:
        self.loss = values.get("loss/total", self.loss)
        self.norm_var = values.get("norm/var", self.norm_var)

    def track_progress(self, step: int, total: int) -> None:
        if self.interactive:
            self._draw_bar(step, total)
            return
        now = time.monotonic()
        if step >= total or now - self.last_line >= self.plain_every_s:
            self.last_line = now
            self.stream.write(self.plain_line(step, total, now - self.started) + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def plain_line(self, step: int, total: int, elapsed: float) -> str:
        """``step 40/200 (20%)  8.1 steps/s  elapsed 00:05  eta 00:20  loss ...``."""
        rate = step / elapsed if elapsed > 0 else math.nan
        remaining = (total - step) / rate if rate > 0 else math.nan
        eta = tqdm.format_interval(remaining) if math.isfinite(remaining) else "?"
        percent = 100 * step / max(total, 1)
        return (
            f"step {step}/{total} ({percent:.0f}%)  {rate:.3g} steps/s  "
            f"elapsed {tqdm.format_interval(elapsed)}  eta {eta}  {self._values()}"
        )

    def _draw_bar(self, step: int, total: int) -> None:
        if self.bar is None:
            self.bar = tqdm(
                total=total, file=self.stream, unit="step", dynamic_ncols=True, mininterval=0.2
            )
        self.bar.set_postfix_str(self._values(), refresh=False)
        self.bar.update(step - self.bar.n)
        if step >= total:
            self.close()

    def _values(self) -> str:
        return f"loss {self.loss:.4f}  norm var {self.norm_var:.4g}"
