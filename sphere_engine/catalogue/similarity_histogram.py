"""The bins of the per-step positive / negative cosine histograms of a pair loss's batch
(``mining/pos_sim_hist/<bin>``, ``mining/neg_sim_hist/<bin>``), torch-free.

Fixed, linear bins over the whole cosine range [-1, 1] (40 bins of 0.05): every step of
every run uses the same bins, so a step × cosine heatmap needs no rebinning and shows
the two distributions separating (or not) as training goes. As for the norm histogram
(``norm_histogram.py``) only the non-empty bins are logged, each as the fraction of the
batch's positive (or negative) pairs that fall in it.
"""

from __future__ import annotations

POSITIVE = "mining/pos_sim_hist/"
NEGATIVE = "mining/neg_sim_hist/"
PREFIXES = (POSITIVE, NEGATIVE)
LOW, HIGH = -1.0, 1.0
BINS = 40
WIDTH = (HIGH - LOW) / BINS


def bin_key(prefix: str, index: int) -> str:
    """The logged key of bin ``index`` of the ``prefix`` family ("mining/pos_sim_hist/07")."""
    if prefix not in PREFIXES or not 0 <= index < BINS:
        raise ValueError(f"similarity histogram: no bin {index} of {prefix!r}")
    return f"{prefix}{index:02d}"


def bin_edges(index: int) -> tuple[float, float]:
    """The (lower, upper) cosine of bin ``index``."""
    return LOW + index * WIDTH, LOW + (index + 1) * WIDTH


def bin_index(key: str, prefix: str) -> int | None:
    """The bin of a logged key of the ``prefix`` family, or None for another key."""
    if not key.startswith(prefix) or not key[len(prefix) :].isdigit():
        return None
    index = int(key[len(prefix) :])
    return index if 0 <= index < BINS else None
