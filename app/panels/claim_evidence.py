"""The Report page's evidence under each claim: for every comparison, the seeds on
each side (n), mean ± std, the effect size (Cohen's d) and Welch's t-test, and whether
the data can tell at all. A claim the seed means "agree" with is shown as
**inconclusive** when a side has a single seed or the difference is inside one
standard deviation: agreement by noise is not agreement."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from sphere_engine.experiments.spec import Claim, Comparison

INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Side:
    label: str
    values: np.ndarray

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
        spread = f" ± {self.std:.3g}" if self.n > 1 else ""
        return f"{self.label} {self.mean:.4g}{spread} (n = {self.n})"


@dataclass(frozen=True)
class Evidence:
    """One comparison's numbers; ``conclusive``: both sides have two or more seeds and
    the means differ by more than one (pooled) standard deviation."""

    left: Side
    right: Side
    effect: float  # Cohen's d (NaN without two seeds a side)
    p_value: float  # Welch's t-test (NaN without two seeds a side)
    conclusive: bool

    def text(self) -> str:
        parts = [self.left.text(), self.right.text()]
        if not math.isnan(self.effect):
            parts.append(f"d = {self.effect:.2f}, Welch p = {self.p_value:.2g}")
        return " vs ".join(parts[:2]) + ("; " + parts[2] if len(parts) > 2 else "")


def _side(values: pd.DataFrame, comparison: Comparison, side: str | float, scale: float) -> Side:
    if not isinstance(side, str):
        return Side(f"{side:g}", np.array([float(side)]))
    column = (
        values.loc[values["variant"] == side, comparison.metric]
        if comparison.metric in values
        else pd.Series(dtype=float)
    )
    seeds = column.dropna().to_numpy(dtype=float) * scale
    if comparison.distance_to is not None:
        seeds = np.abs(seeds - comparison.distance_to)
    return Side(side, seeds)


def evidence(comparison: Comparison, values: pd.DataFrame, scale: float) -> Evidence:
    left = _side(values, comparison, comparison.left, scale)
    right = _side(values, comparison, comparison.right, scale)
    fixed = not isinstance(comparison.right, str)  # against a number: one sample
    if left.n > 1 and (right.n > 1 or fixed):
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
        return Evidence(left, right, float(effect), float(test.pvalue), conclusive)
    return Evidence(left, right, math.nan, math.nan, False)


def judged(
    verdict: str, claim: Claim, values: pd.DataFrame, scales: dict[str, float]
) -> tuple[str, list[Evidence]]:
    """The verdict to show ("agrees" or "disagrees" becomes "inconclusive" when any
    comparison's evidence is) and the evidence of each comparison."""
    found = [evidence(c, values, scales.get(c.metric, 1.0)) for c in claim.comparisons]
    if verdict in ("agrees", "disagrees") and not all(e.conclusive for e in found):
        return INCONCLUSIVE, found
    return verdict, found
