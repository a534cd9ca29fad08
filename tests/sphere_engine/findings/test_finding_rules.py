"""Each finding on synthetic series: one where it must fire, one where it must not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sphere_engine.findings import RunSeries, Severity, evaluate_findings, get_finding

STEPS = np.arange(10, 1010, 10)


def line(start: float, end: float, steps: np.ndarray = STEPS, *, log: bool = False) -> dict:
    values = np.geomspace(start, end, len(steps)) if log else np.linspace(start, end, len(steps))
    return dict(zip(steps.tolist(), values.tolist(), strict=True))


def healthy_train() -> dict:
    return {
        "loss/total": line(0.8, 0.2),
        "loss/metric": line(0.8, 0.2),
        "norm/mean": line(1.0, 8.0),
        "norm/min": line(0.8, 7.0),
        "norm/max": line(1.2, 9.0),
        "norm/var": line(0.01, 0.05),
        "norm/cv": line(0.02, 0.03),
        "grad/norm_inv_corr": line(0.9, 0.1),
        "direction/update_ratio": line(1.5, 1.05),
    }


def healthy_evals() -> dict:
    steps = np.arange(100, 1100, 100)
    return {
        "recall@1": line(0.3, 0.8, steps),
        "uniformity": line(-2.0, -3.5, steps),
        "effective_rank": line(10.0, 14.0, steps),
    }


def fires(name: str, train: dict | None = None, evals: dict | None = None, config=None):
    series = RunSeries.from_points(
        {**healthy_train(), **(train or {})}, {**healthy_evals(), **(evals or {})}, config
    )
    return get_finding(name).check(series)


def test_a_healthy_run_has_no_finding() -> None:
    assert evaluate_findings(RunSeries.from_points(healthy_train(), healthy_evals())) == []


def test_an_empty_run_has_no_finding_and_no_error() -> None:
    assert evaluate_findings(RunSeries()) == []


# ---- diverged
def test_diverged_fires_on_a_nan_loss_at_its_step() -> None:
    loss = line(0.8, 0.2)
    loss[500] = math.nan
    hit = fires("diverged", {"loss/total": loss})
    assert hit is not None and hit.step_start == 500 and "step 500" in hit.message


def test_diverged_fires_on_norms_growing_without_bound_with_a_finite_loss() -> None:
    # the lr = 1e9 run: the loss stays a finite constant while the norms reach 1e33
    hit = fires("diverged", {"loss/total": line(0.1, 0.1), "norm/mean": line(0.3, 1e33, log=True)})
    assert hit is not None and "1e+33" in hit.message
    assert hit.step_end == 1000 and 10 < hit.step_start < 1000


def test_diverged_does_not_fire_on_norms_growing_a_hundredfold() -> None:
    assert fires("diverged", {"norm/mean": line(0.3, 30.0, log=True)}) is None


# ---- dead loss
def test_dead_loss_fires_on_a_long_stretch_of_exactly_zero_loss() -> None:
    loss = line(0.1, 0.01)
    for step in range(300, 1010, 10):
        loss[step] = 0.0
    hit = fires("dead_loss", {"loss/metric": loss})
    assert hit is not None and (hit.step_start, hit.step_end) == (300, 1000)


def test_dead_loss_fires_when_the_miner_returns_nothing() -> None:
    active = line(0.2, 0.0)
    for step in range(500, 1010, 10):
        active[step] = 0.0
    hit = fires("dead_loss", {"mining/active_fraction": active})
    assert hit is not None and "no active" in hit.message and hit.step_start == 500


def test_dead_loss_ignores_a_few_easy_batches() -> None:
    loss = line(0.1, 0.01)
    for step in (200, 210, 600):
        loss[step] = 0.0
    assert fires("dead_loss", {"loss/metric": loss}) is None


# ---- unbalanced direction updates
def test_unbalanced_directions_fires_on_spread_norms_with_correlated_gradients() -> None:
    hit = fires(
        "unbalanced_directions",
        {
            "norm/cv": line(0.1, 0.4),
            "grad/norm_inv_corr": line(0.6, 0.8),
            "direction/update_ratio": line(1.5, 2.5),
        },
    )
    assert hit is not None and "SEC" in get_finding("unbalanced_directions").title
    assert "turns" in hit.message


def test_unbalanced_directions_fires_on_rising_variance() -> None:
    hit = fires(
        "unbalanced_directions",
        {"norm/var": line(0.1, 5.0, log=True), "grad/norm_inv_corr": line(0.7, 0.7)},
    )
    assert hit is not None and "rising" in hit.message


def test_unbalanced_directions_stays_quiet_with_equal_norms() -> None:
    # SEC on: the correlation vanishes and the norm spread stays small
    assert fires("unbalanced_directions", {"grad/norm_inv_corr": line(0.6, 0.05)}) is None
    assert fires("unbalanced_directions", {"grad/norm_inv_corr": line(0.8, 0.8)}) is None


# ---- norms shrinking to ε
def test_norms_shrinking_fires_when_the_norms_fall_to_nothing() -> None:
    hit = fires(
        "norms_shrinking",
        {"norm/mean": line(1.0, 1e-4, log=True), "norm/min": line(0.5, 1e-5, log=True)},
    )
    assert hit is not None and "fell" in hit.message


def test_norms_shrinking_fires_on_a_sample_at_epsilon() -> None:
    smallest = line(0.5, 0.4)
    smallest[700] = 1e-9
    hit = fires("norms_shrinking", {"norm/min": smallest})
    assert hit is not None and hit.step_start == 700


def test_norms_shrinking_ignores_norms_that_settle_lower() -> None:
    assert fires("norms_shrinking", {"norm/mean": line(10.0, 1.0)}) is None


# ---- collapse
def test_collapse_fires_on_uniformity_near_zero() -> None:
    steps = np.arange(100, 1100, 100)
    hit = fires("collapse", evals={"uniformity": line(-3.0, -0.1, steps)})
    assert hit is not None and "uniformity" in hit.message


def test_collapse_fires_on_a_falling_effective_rank() -> None:
    steps = np.arange(100, 1100, 100)
    hit = fires("collapse", evals={"effective_rank": line(12.0, 3.0, steps)})
    assert hit is not None and "effective rank fell" in hit.message


def test_collapse_ignores_a_spreading_embedding() -> None:
    steps = np.arange(100, 1100, 100)
    assert fires("collapse", evals={"uniformity": line(-1.5, -3.0, steps)}) is None


# ---- fixed-head centroids off their vertices
def test_off_vertex_fires_when_centroids_stay_far_from_their_vertices() -> None:
    steps = np.arange(100, 1100, 100)
    hit = fires("centroids_off_vertices", evals={"vertex/angle_mean": line(50.0, 45.0, steps)})
    assert hit is not None and "45" in hit.message


def test_off_vertex_ignores_centroids_that_reach_their_vertices() -> None:
    steps = np.arange(100, 1100, 100)
    assert fires("centroids_off_vertices", evals={"vertex/angle_mean": line(50, 5, steps)}) is None
    assert fires("centroids_off_vertices") is None  # no fixed head: nothing logged


# ---- overfitting and flat evaluation
def test_overfitting_fires_when_recall_falls_as_the_loss_falls() -> None:
    steps = np.arange(100, 1100, 100)
    recall = line(0.3, 0.7, steps)
    recall |= {700: 0.72, 800: 0.6, 900: 0.55, 1000: 0.5}
    hit = fires("overfitting", evals={"recall@1": recall})
    assert hit is not None and hit.step_start == 700 and hit.step_end == 1000


def test_overfitting_ignores_a_drop_while_the_loss_rises() -> None:
    steps = np.arange(100, 1100, 100)
    recall = line(0.3, 0.7, steps) | {800: 0.6, 900: 0.55, 1000: 0.5}
    assert fires("overfitting", {"loss/total": line(0.2, 0.9)}, {"recall@1": recall}) is None
    assert fires("overfitting") is None  # still improving


def test_flat_evaluation_fires_when_the_second_half_does_not_move() -> None:
    steps = np.arange(100, 1100, 100)
    recall = {int(s): min(0.3 + 0.1 * i, 0.7) for i, s in enumerate(steps)}
    hit = fires("flat_evaluation", evals={"recall@1": recall})
    assert hit is not None and hit.severity is Severity.INFO


def test_flat_evaluation_needs_enough_evaluations() -> None:
    assert fires("flat_evaluation", evals={"recall@1": {100: 0.5, 1000: 0.5}}) is None
    assert fires("flat_evaluation") is None


# ---- the catalogue itself
def test_every_finding_is_declared_in_full() -> None:
    from sphere_engine.catalogue import find
    from sphere_engine.findings import list_findings

    findings = list_findings()
    assert len(findings) >= 8
    for finding in findings:
        assert finding.title and finding.action and finding.paper, finding.name
        assert len(finding.explanation) > 200, finding.name  # a paragraph, not a label
        for source, key in finding.series_keys():
            assert find(key, source) is not None, (finding.name, key)


def test_detections_round_trip_through_json_and_sort_by_severity() -> None:
    from sphere_engine.findings import Detection

    loss = line(0.1, 0.1)
    evals = {"recall@1": {int(s): 0.5 for s in np.arange(100, 1100, 100)}}
    series = RunSeries.from_points(
        {**healthy_train(), "loss/total": loss, "norm/mean": line(0.3, 1e33, log=True)},
        {**healthy_evals(), **evals},
    )
    found = evaluate_findings(series)
    assert [d.name for d in found] == ["diverged", "flat_evaluation"]
    assert [Detection.from_dict(d.to_dict()) for d in found] == found


@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_diverged_names_an_infinite_norm(bad: float) -> None:
    norms = line(1.0, 2.0)
    norms[30] = bad
    hit = fires("diverged", {"norm/mean": norms})
    assert hit is not None and hit.step_start == 30
