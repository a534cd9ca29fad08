"""app/transforms.py: smoothing, downsampling, projections and group statistics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from app import transforms


def test_ema_debiased_matches_tensorboard_by_hand():
    # a = 0.5: ema = 0.5, 1.25, 2.125; debiased by 1 - 0.5^t = 0.5, 0.75, 0.875
    smoothed = transforms.ema_debiased([1.0, 2.0, 3.0], 0.5)
    assert smoothed == pytest.approx([1.0, 1.25 / 0.75, 2.125 / 0.875], abs=1e-12)


def test_ema_skips_non_finite_values_without_advancing():
    smoothed = transforms.ema_debiased([1.0, math.nan, 3.0], 0.5)
    assert smoothed[0] == pytest.approx(1.0)
    assert math.isnan(smoothed[1])
    assert smoothed[2] == pytest.approx((0.5 * 0.5 + 0.5 * 3.0) / 0.75)


def test_ema_weight_zero_is_identity_and_bad_weight_raises():
    assert transforms.ema_debiased([4.0, -1.0], 0.0).tolist() == [4.0, -1.0]
    with pytest.raises(ValueError, match="smoothing weight"):
        transforms.ema_debiased([1.0], 1.0)


def test_smooth_series_smooths_each_run_separately():
    frame = pd.DataFrame(
        {
            "run_id": ["a", "a", "b", "b"],
            "name": ["m"] * 4,
            "step": [1, 2, 1, 2],
            "value": [0.0, 10.0, 5.0, 5.0],
        }
    )
    smoothed = transforms.smooth_series(frame, 0.9)
    b = smoothed[smoothed["run_id"] == "b"]["value"].tolist()
    assert b == pytest.approx([5.0, 5.0])  # a constant stays constant when debiased
    a = smoothed[smoothed["run_id"] == "a"]["value"].tolist()
    assert a[0] == pytest.approx(0.0)
    assert a[1] == pytest.approx((0.1 * 10.0) / (1 - 0.81))


def _series(run: str, steps: int, spike_at: int | None = None) -> pd.DataFrame:
    values = np.arange(steps, dtype=float)
    if spike_at is not None:
        values[spike_at] = 1000.0
    return pd.DataFrame(
        {
            "run_id": run,
            "name": "m",
            "step": np.arange(1, steps + 1),
            "value": values,
            "min": values,
            "max": values,
            "wall_time": np.arange(steps, dtype=float),
        }
    )


def test_downsample_keeps_last_value_and_the_spike_in_the_band():
    frame = _series("a", 100, spike_at=54)
    reduced = transforms.downsample(frame, 10)
    assert len(reduced) == 10
    assert reduced["max"].max() == 1000.0  # the spike survives in the min-max band
    assert reduced["value"].iloc[-1] == 99.0  # the last bucket keeps the last value
    assert reduced["step"].iloc[-1] == 100
    assert reduced["min"].iloc[0] == 0.0


def test_downsample_frames_without_band_columns():
    frame = pd.DataFrame(
        {
            "sample": np.repeat([0, 1], 50),
            "step": np.tile(np.arange(50), 2),
            "norm": np.arange(100, dtype=float),
        }
    )
    reduced = transforms.downsample(frame, 5, by=["sample"])
    assert list(reduced.columns) == ["sample", "step", "norm"]
    assert reduced.groupby("sample").size().tolist() == [5, 5]
    assert reduced["norm"].iloc[4] == 49.0


def test_downsample_uses_one_grid_for_all_runs():
    frame = pd.concat([_series("long", 100), _series("short", 50)], ignore_index=True)
    reduced = transforms.downsample(frame, 10)
    long_steps = reduced[reduced["run_id"] == "long"]["step"].tolist()
    short_steps = reduced[reduced["run_id"] == "short"]["step"].tolist()
    assert len(long_steps) == 10
    assert short_steps == long_steps[: len(short_steps)]  # buckets line up across runs


def test_cap_total_points_over_several_series():
    frame = pd.concat([_series(r, 4000) for r in "abc"], ignore_index=True)
    capped = transforms.cap_total_points(frame, 5000)
    assert len(capped) <= 5000
    assert set(capped["run_id"]) == {"a", "b", "c"}
    assert transforms.cap_total_points(frame.head(10), 5000).equals(frame.head(10))


def test_relative_time_uses_run_start():
    frame = pd.DataFrame({"run_id": ["a", "a", "b"], "wall_time": [105.0, 110.0, 7.0]})
    times = transforms.relative_time(frame, {"a": 100.0})
    assert times.tolist() == [5.0, 10.0, 0.0]


def test_group_mean_std_over_seeds():
    frame = pd.DataFrame(
        {"run_id": ["s0", "s1", "t0"], "step": [5, 5, 5], "value": [1.0, 3.0, 7.0]}
    )
    stats = transforms.group_mean_std(frame, {"s0": "sec", "s1": "sec", "t0": "none"})
    sec = stats[stats["group"] == "sec"].iloc[0]
    assert sec["mean"] == 2.0
    assert sec["std"] == pytest.approx(math.sqrt(2.0))
    assert sec["runs"] == 2
    none = stats[stats["group"] == "none"].iloc[0]
    assert (none["std"], none["lower"], none["upper"]) == (0.0, 7.0, 7.0)


def test_best_rows_respects_direction():
    table = pd.DataFrame({"R@1": [80.0, 85.0, 70.0], "var": [7.6, 3.2, 0.4]})
    assert transforms.best_rows(table, {"R@1": True, "var": False}) == {"R@1": 1, "var": 2}


def test_time_at_steps_reads_each_runs_clock():
    reference = pd.DataFrame(
        {"run_id": ["a", "a", "b", "b"], "step": [0, 10, 0, 10], "time": [0.0, 5.0, 0.0, 20.0]}
    )
    frame = pd.DataFrame({"run_id": ["a", "b", "c"], "step": [4, 5, 5]})
    times = transforms.time_at_steps(frame, reference)
    assert times.iloc[:2].tolist() == [2.0, 10.0]
    assert np.isnan(times.iloc[2])


def test_histogram_cells_span_to_the_next_step():
    frame = pd.DataFrame(
        {
            "run_id": "a",
            "name": ["norm_hist/048", "norm_hist/049", "norm_hist/048", "norm/var"],
            "step": [10, 10, 20, 10],
            "value": [0.5, 0.5, 1.0, 3.0],
        }
    )
    cells = transforms.histogram_cells(frame)
    assert cells[["x0", "x1"]].values.tolist() == [[10, 20], [10, 20], [20, 30]]
    assert cells["lower"].iloc[0] == pytest.approx(1.0)
    assert cells["fraction"].tolist() == [0.5, 0.5, 1.0]


def test_best_rows_never_picks_an_excluded_row():
    # the diverged run's R@1 is highest: it cannot be trusted, so the next one is best
    table = pd.DataFrame({"R@1": [80.0, 95.0, 70.0], "var": [7.6, 0.1, 0.4]})
    untrusted = pd.Series([False, True, False])
    best = transforms.best_rows(table, {"R@1": True, "var": False}, exclude=untrusted)
    assert best == {"R@1": 0, "var": 2}
