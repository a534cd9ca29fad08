"""Effective rank: d for isotropic points, 1 for points on a line, in the evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics import effective_rank, evaluate_embeddings


def test_points_spread_over_every_axis_have_full_rank() -> None:
    # ±e_i for each of 4 axes: equal singular values -> exactly 4
    axes = np.concatenate([np.eye(4), -np.eye(4)])
    assert effective_rank(axes) == pytest.approx(4.0)


def test_points_on_a_line_have_rank_one_and_a_plane_two() -> None:
    line = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]] * 5)
    assert effective_rank(line) == pytest.approx(1.0)
    angles = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    circle = np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=1)
    assert effective_rank(circle * 7.0) == pytest.approx(2.0)  # scale-free: unit rows


def test_collapsing_embeddings_lose_rank_in_the_evaluation() -> None:
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 30)
    spread = rng.normal(size=(120, 16))
    collapsed = spread * 0.002 + np.array([1.0] + [0.0] * 15)  # all near one point
    full = evaluate_embeddings(spread, labels)["effective_rank"]
    low = evaluate_embeddings(collapsed, labels)["effective_rank"]
    assert full > 12.0 and low < 2.0


def test_a_single_embedding_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        effective_rank(np.ones((1, 3)))
