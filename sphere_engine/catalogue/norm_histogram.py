"""The bins of the per-step norm histogram (``norm_hist/<bin>``), torch-free.

Fixed, log-spaced absolute edges: 24 bins per decade from 10⁻² to 10³ (120 bins).

- Absolute, not relative to the batch (e.g. to its median): every step of every run
  uses the same bins, so a step × norm heatmap needs no rebinning, two runs side by
  side are read on one axis, and the drift of the whole distribution stays visible.
- Log-spaced: each bin is ~10 % wide whatever the norm scale (0.1 for a normalised
  head, 100 for a raw MLP), i.e. constant relative resolution, which is what a
  coefficient of variation measures.
- Norms outside [10⁻², 10³] are counted in the end bins.

The engine logs only the non-empty bins (a batch fills a handful), as the fraction of
the batch in each, so the cost is a few scalars per logged step.
"""

from __future__ import annotations

PREFIX = "norm_hist/"
LOW_EXPONENT, HIGH_EXPONENT = -2, 3
BINS_PER_DECADE = 24
BINS = (HIGH_EXPONENT - LOW_EXPONENT) * BINS_PER_DECADE


def bin_key(index: int) -> str:
    """The logged key of bin ``index`` ("norm_hist/042")."""
    if not 0 <= index < BINS:
        raise ValueError(f"norm histogram bin must be in [0, {BINS}), got {index}")
    return f"{PREFIX}{index:03d}"


def bin_edges(index: int) -> tuple[float, float]:
    """The (lower, upper) norm of bin ``index``."""
    lower = LOW_EXPONENT + index / BINS_PER_DECADE
    return 10.0**lower, 10.0 ** (lower + 1 / BINS_PER_DECADE)


def bin_index(key: str) -> int | None:
    """The bin of a logged key, or None for another key."""
    if not key.startswith(PREFIX) or not key[len(PREFIX) :].isdigit():
        return None
    index = int(key[len(PREFIX) :])
    return index if 0 <= index < BINS else None
