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

    evals = {"recall@1": {int(s): 0.5 for s in np.arange(100, 1100, 100)}}
    series = RunSeries.from_points(
        {**healthy_train(), "norm/mean": line(1.0, 1e-4, log=True), "norm/min": line(0.5, 1e-5)},
        {**healthy_evals(), **evals},
    )
    found = evaluate_findings(series)
    assert [(d.name, d.severity) for d in found] == [
        ("norms_shrinking", Severity.WARNING),
        ("flat_evaluation", Severity.INFO),
    ]
    assert [Detection.from_dict(d.to_dict()) for d in found] == found


def test_a_diverged_run_reports_only_its_divergence() -> None:
    # what a diverged run logs afterwards (a flat R@1, a collapsed embedding) is noise
    evals = {"recall@1": {int(s): 0.5 for s in np.arange(100, 1100, 100)}}
    evals["uniformity"] = {int(s): -0.01 for s in np.arange(100, 1100, 100)}
    series = RunSeries.from_points(
        {**healthy_train(), "loss/total": line(0.1, 0.1), "norm/mean": line(0.3, 1e33, log=True)},
        {**healthy_evals(), **evals},
    )
    assert get_finding("collapse").check(series) is not None
    assert [d.name for d in evaluate_findings(series)] == ["diverged"]


def test_unbalanced_directions_is_a_warning_only_for_a_wide_norm_spread() -> None:
    # the SimCLR presets on digits: CV ≈ 0.27 with corr ≈ 0.8, and they train well
    mild = fires(
        "unbalanced_directions", {"norm/cv": line(0.27, 0.27), "grad/norm_inv_corr": line(0.8, 0.8)}
    )
    wide = fires(
        "unbalanced_directions", {"norm/cv": line(0.4, 0.4), "grad/norm_inv_corr": line(0.8, 0.8)}
    )
    assert mild is not None and mild.severity is Severity.INFO
    assert wide is not None and wide.severity is Severity.WARNING


@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_diverged_names_an_infinite_norm(bad: float) -> None:
    norms = line(1.0, 2.0)
    norms[30] = bad
    hit = fires("diverged", {"norm/mean": norms})
    assert hit is not None and hit.step_start == 30


# ---- severity per firing, decided from the evidence
def dead_from(step: int, loss: dict | None = None) -> dict:
    loss = dict(loss or line(0.3, 0.05))
    for at in range(step, 1010, 10):
        loss[at] = 0.0
    return loss


def test_a_loss_dead_from_the_first_logged_step_is_critical_never_learned() -> None:
    # no pair inside the margins from step 1: the weights never move, nor does R@1
    still = {int(s): 0.973 for s in np.arange(100, 1100, 100)}
    hit = fires("dead_loss", {"loss/metric": dead_from(10)}, {"recall@1": still})
    assert hit is not None and hit.severity is Severity.CRITICAL
    assert "from step 10, the first logged step" in hit.message and "never learned" in hit.message
    assert "recall@1 stayed at 0.973" in hit.message


def test_an_early_dead_loss_on_a_run_whose_evaluation_moved_is_not_critical() -> None:
    # the default config's case at coarse logging: the loss is 0 from the second logged
    # step, but the model did learn (R@1 moved): its result means something
    hit = fires("dead_loss", {"loss/metric": dead_from(20)})
    assert hit is not None and hit.severity is Severity.INFO


def test_a_miner_that_runs_dry_after_the_metric_rose_is_info_only() -> None:
    # the SEC preset's case: R@1 still rising while semi-hard triplets run out
    hit = fires("dead_loss", {"loss/metric": dead_from(500)})
    assert hit is not None and hit.severity is Severity.INFO
    assert "recall@1 went from 0.3 (step 100) to 0.8 (step 1000)" in hit.message
    # the advice says what keeps such a run learning
    action = get_finding("dead_loss").action
    assert "harder mining" in action and "larger batches" in action and "margin" in action


def test_a_dead_loss_with_a_falling_evaluation_is_a_warning_with_both_figures() -> None:
    steps = np.arange(100, 1100, 100)
    recall = line(0.3, 0.8, steps) | {900: 0.6, 1000: 0.55}
    hit = fires("dead_loss", {"loss/metric": dead_from(500)}, {"recall@1": recall})
    assert hit is not None and hit.severity is Severity.WARNING
    assert "fell from 0.689 (step 800) to 0.55 (step 1000)" in hit.message


def test_a_dead_stretch_reaches_the_last_logged_step_when_most_steps_after_it_are_dead() -> None:
    # a live run: dead since 300, with a few active batches between; the span follows
    # the run instead of stopping at the end of its longest unbroken stretch
    loss = dead_from(300)
    for at in (600, 800):
        loss[at] = 0.01
    hit = fires("dead_loss", {"loss/metric": loss})
    assert hit is not None and (hit.step_start, hit.step_end) == (300, 1000)
    assert "97% of the logged steps 300–1000" in hit.message


def test_a_rule_never_reports_above_its_worst_severity() -> None:
    from sphere_engine.findings import Detection, Finding, Hit

    finding = Finding(
        "probe", "Probe", Severity.WARNING, "why", "paper", (), "try", lambda run: None
    )
    detection = Detection.of(finding, Hit("seen", 1, 2, severity=Severity.CRITICAL), as_of=7)
    assert detection.severity is Severity.WARNING and detection.as_of == 7


def test_divergence_before_the_first_logged_step_says_so_with_absolute_values() -> None:
    norms = line(9.34e16, 2.38e18, log=True)
    hit = fires("diverged", {"norm/mean": norms, "loss/total": line(0.1, 0.1)})
    assert hit is not None and hit.severity is Severity.CRITICAL
    assert hit.message.startswith("mean norm 9.34e+16 by step 10, the first logged step")
    assert "2.38e+18 at step 1000" in hit.message and "×" not in hit.message


def test_divergence_later_in_the_run_gives_where_it_started_and_where_it_crossed() -> None:
    hit = fires("diverged", {"norm/mean": line(0.3, 1e33, log=True)})
    assert hit is not None
    assert hit.message.startswith("mean norm grew from 0.3 at step 10, the first logged step, to")


def test_a_flat_evaluation_gives_its_level_not_a_zero_spread() -> None:
    recall = {int(s): 0.817 for s in np.arange(100, 1100, 100)}
    hit = fires("flat_evaluation", evals={"recall@1": recall})
    assert hit is not None and hit.message == "recall@1 stayed at 0.817 from step 600 to 1000"
    assert "within" not in hit.message


def test_detections_are_as_of_the_last_logged_step() -> None:
    found = evaluate_findings(
        RunSeries.from_points({**healthy_train(), "norm/mean": line(0.3, 1e33, log=True)})
    )
    assert found[0].name == "diverged" and found[0].as_of == 1000


def test_a_narrow_cone_seen_once_is_stated_as_a_level_not_a_rise() -> None:
    series = RunSeries.from_points(evals={"uniformity": {300: -0.251}})
    hit = get_finding("collapse").check(series)
    assert hit is not None
    assert hit.message.startswith("uniformity -0.251 at step 300:") and "rose" not in hit.message
