"""The one verdict on a declared claim, for the Report page and ``spherescope report``.

For every comparison of a claim: the seeds on each side (n), mean ± std, the effect
size (Cohen's d) and Welch's t-test. A comparison the seed means satisfy is only
*conclusive* when both sides have two or more seeds and, for "better/worse" claims,
the means differ by more than one (pooled) standard deviation: agreement by noise is
not agreement. A claim **agrees** when every comparison holds conclusively,
**disagrees** when one fails conclusively, is **inconclusive** otherwise, and **not
measured** when a side has no value. Pure numpy/scipy over the per-run values frame
(``tables`` describes it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from sphere_engine.catalogue.numbers import format_number
from sphere_engine.experiments.spec import Claim, Comparison, Experiment, Metric

AGREES = "agrees"
DISAGREES = "disagrees"
INCONCLUSIVE = "inconclusive"
NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Side:
    label: str
    values: np.ndarray  # one value per seed, display units (|v − distance_to| when set)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return float(self.values.mean()) if self.n else math.nan

    @property
    def std(self) -> float:
        return float(self.values.std(ddof=1)) if self.n > 1 else math.nan

    def text(self) -> str:
        if not self.n:
            return f"{self.label}: not measured"
        spread = f" ± {format_number(self.std)}" if self.n > 1 else ""
        return f"{self.label} {format_number(self.mean)}{spread} (n = {self.n})"


@dataclass(frozen=True)
class Evidence:
    """One comparison's numbers and what they say."""

    comparison: Comparison
    label: str  # the metric's label
    left: Side
    right: Side
    holds: bool  # the means satisfy the relation
    effect: float  # Cohen's d (NaN without two seeds a side)
    p_value: float  # Welch's t-test, or one-sample against a number (NaN: too few seeds)
    conclusive: bool

    @property
    def measured(self) -> bool:
        return bool(self.left.n and self.right.n)

    def text(self) -> str:
        if not self.measured:
            return f"{self.label}: not measured"
        relation = self.comparison.relation
        tolerance = self.comparison.tolerance
        right = self.right.text() + (f" (tolerance {tolerance:g})" if tolerance else "")
        parts = [f"{self.label}: {self.left.text()} {relation} {right}? "]
        parts.append("yes" if self.holds else "no")
        if not math.isnan(self.effect):
            parts.append(f"; d = {self.effect:.2f}, p = {self.p_value:.2g}")
        if not self.conclusive:
            few = min(self.left.n, self.right.n) < 2 and not self._fixed
            parts.append(" — one seed a side" if few else " — within one std")
        return "".join(parts)

    @property
    def _fixed(self) -> bool:
        return not isinstance(self.comparison.right, str)


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str  # AGREES, DISAGREES, INCONCLUSIVE or NOT_MEASURED
    evidence: tuple[Evidence, ...]

    @property
    def detail(self) -> str:
        return "; ".join(e.text() for e in self.evidence)


def check_claims(experiment: Experiment, values: pd.DataFrame) -> list[Verdict]:
    """Each declared claim of ``experiment`` judged on ``values`` (one row per run)."""
    return [judge(experiment, claim, values) for claim in experiment.claims]


def judge(experiment: Experiment, claim: Claim, values: pd.DataFrame) -> Verdict:
    found = tuple(evidence(c, values, _metric(experiment, c.metric)) for c in claim.comparisons)
    if not all(e.measured for e in found):
        verdict = NOT_MEASURED
    elif any(e.conclusive and not e.holds for e in found):
        verdict = DISAGREES
    elif all(e.conclusive and e.holds for e in found):
        verdict = AGREES
    else:
        verdict = INCONCLUSIVE
    return Verdict(claim, verdict, found)


def evidence(comparison: Comparison, values: pd.DataFrame, metric: Metric) -> Evidence:
    scale = 100.0 if metric.percent else 1.0
    left = _side(values, comparison, comparison.left, scale)
    right = _side(values, comparison, comparison.right, scale)
    holds = _holds(comparison, left.mean, right.mean) if left.n and right.n else False
    fixed = not isinstance(comparison.right, str)  # against a number: one sample
    if not (left.n > 1 and (right.n > 1 or fixed)):
        return Evidence(comparison, metric.label, left, right, holds, math.nan, math.nan, False)
    if fixed:
        pooled = left.std
        test = stats.ttest_1samp(left.values, right.mean)
    else:
        pooled = math.sqrt((left.std**2 + right.std**2) / 2)
        test = stats.ttest_ind(left.values, right.values, equal_var=False)
    difference = left.mean - right.mean
    effect = difference / pooled if pooled > 0 else math.inf * np.sign(difference)
    # "≈" and "≥" claim no difference: enough seeds is all they need
    ordered = comparison.relation in (">", "<")
    conclusive = not ordered or pooled == 0 or abs(difference) > pooled
    return Evidence(
        comparison, metric.label, left, right, holds, float(effect), float(test.pvalue),
        conclusive,
    )  # fmt: skip


def _holds(comparison: Comparison, a: float, b: float) -> bool:
    if comparison.relation == "≈":
        return abs(a - b) <= comparison.tolerance
    if comparison.relation == "≥":
        return a >= b - comparison.tolerance
    return a > b if comparison.relation == ">" else a < b


def _side(values: pd.DataFrame, comparison: Comparison, side: str | float, scale: float) -> Side:
    if not isinstance(side, str):
        return Side(f"{side:g}", np.array([float(side)]))
    column = (
        values.loc[values["variant"] == side, comparison.metric]
        if comparison.metric in values
        else pd.Series(dtype=float)
    )
    seeds = column.dropna().to_numpy(dtype=float) * scale
    label = side
    if comparison.distance_to is not None:
        seeds = np.abs(seeds - comparison.distance_to)
        label = f"|{side} − {comparison.distance_to:g}|"
    return Side(label, seeds)


def _metric(experiment: Experiment, key: str) -> Metric:
    return next((m for m in experiment.metrics if m.key == key), Metric(key, key))
