"""The per-step norm histogram: fixed log-spaced bins, logged in the step's one transfer."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from sphere_engine.catalogue import Source, find
from sphere_engine.catalogue import norm_histogram as hist
from sphere_engine.diagnostics import StepStatistics, batch_statistics, norm_histogram


def test_bins_are_fixed_log_spaced_and_round_trip():
    assert hist.BINS == 120
    low, high = hist.bin_edges(0)
    assert low == pytest.approx(0.01) and high / low == pytest.approx(10 ** (1 / 24))
    assert hist.bin_edges(hist.BINS - 1)[1] == pytest.approx(1000.0)
    assert hist.bin_index(hist.bin_key(42)) == 42
    assert hist.bin_index("norm/var") is None
    with pytest.raises(ValueError, match="norm histogram bin"):
        hist.bin_key(hist.BINS)
    assert find(hist.bin_key(7), Source.TRAINING_BATCH).group == "norm_hist"


def test_counts_land_in_the_bin_of_each_norm():
    norms = torch.tensor([1.0, 1.05, 10.0, 1e-5, 1e6])
    counts = norm_histogram(norms)
    assert counts.sum() == 5 and len(counts) == hist.BINS
    one = int((0 - hist.LOW_EXPONENT) * hist.BINS_PER_DECADE)  # 10^0 starts bin 48
    assert counts[one] == 2 and counts[one + 24] == 1
    assert counts[0] == 1 and counts[-1] == 1  # out of range: the end bins


def test_histogram_rides_in_the_one_host_transfer():
    torch.manual_seed(0)
    embeddings = torch.randn(64, 8) * 3
    labels = torch.arange(64) % 4
    stats = StepStatistics()
    stats.add(batch_statistics(embeddings, labels, None))
    stats.sample_norms = torch.tensor([1.0, 2.0])
    values, sample_norms = stats.to_host()
    fractions = {k: v for k, v in values.items() if k.startswith(hist.PREFIX)}
    assert 0 < len(fractions) < 40  # only the non-empty bins
    assert sum(fractions.values()) == pytest.approx(1.0)
    assert sample_norms == [1.0, 2.0]
    assert math.isfinite(values["norm/var"])
    mean_bin = hist.bin_key(
        int((math.log10(values["norm/p50"]) - hist.LOW_EXPONENT) * hist.BINS_PER_DECADE)
    )
    assert mean_bin in fractions


def test_non_finite_norms_are_not_counted():
    """A diverging batch must reach the divergence check, not crash in bincount."""
    counts = norm_histogram(torch.tensor([float("nan"), float("inf"), 1.0]))
    assert counts.sum() == 1


def test_one_searchsorted_gives_the_log10_rule_at_every_bin_edge():
    """The bins come from precomputed exact starts; on both sides of each start they
    agree with floor((log10(norm) − LOW) · BINS_PER_DECADE), clipped to the bins."""
    from sphere_engine.diagnostics.numpy_finish import _BIN_STARTS

    starts = _BIN_STARTS[:-1]
    for norm in np.concatenate([starts, np.nextafter(starts, 0.0), [0.0, 5e-3, 2e3]]):
        rule = math.floor((np.log10(np.array([max(norm, 1e-12)]))[0] - hist.LOW_EXPONENT) * 24)
        expected = min(max(rule, 0), hist.BINS - 1)
        assert np.flatnonzero(norm_histogram(np.array([norm]))).tolist() == [expected]
