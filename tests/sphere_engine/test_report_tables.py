"""The report's table maths on hand-made per-run values (pure pandas, no store)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sphere_engine.experiments import Experiment, Metric, Variant
from sphere_engine.experiments.tables import (
    display_table,
    paired_effects,
    pearson,
    summary,
    to_markdown,
)

R1 = Metric("recall@1", "R@1", percent=True)
VAR = Metric("train_mean:norm/var", "train norm var")


def _experiment() -> Experiment:
    return Experiment(
        name="toy",
        title="toy",
        description="",
        base={},
        variants=(Variant("a", reference={"recall@1": 80.0}), Variant("b")),
        metrics=(R1, VAR),
        pairs=(("a", "b"),),
    )


VALUES = pd.DataFrame(
    {
        "variant": ["a", "a", "a", "b", "b", "b"],
        "seed": [0, 1, 2, 0, 1, 2],
        "recall@1": [0.80, 0.82, 0.84, 0.90, 0.91, 0.95],
        "train_mean:norm/var": [3.0, 2.0, 1.0, 0.5, 0.5, 0.2],
    }
)


def test_summary_is_mean_sample_std_and_n_in_display_units() -> None:
    table = summary(_experiment(), VALUES).set_index(["variant", "metric"])
    assert table.loc[("a", "R@1"), "mean"] == pytest.approx(82.0)
    assert table.loc[("a", "R@1"), "std"] == pytest.approx(2.0)  # ddof = 1
    assert table.loc[("a", "R@1"), "n"] == 3
    assert table.loc[("a", "R@1"), "paper"] == 80.0
    assert math.isnan(table.loc[("b", "R@1"), "paper"])


def test_display_table_puts_the_paper_value_beside_the_measured_one() -> None:
    table = display_table(_experiment(), VALUES)
    assert list(table.columns) == ["variant", "n", "R@1", "R@1 (paper)", "train norm var"]
    assert table.loc[0, "R@1"] == "82.0 ± 2.00"  # 3 significant digits (catalogue.numbers)
    assert table.loc[0, "R@1 (paper)"] == "80.0"
    assert to_markdown(table).splitlines()[2].startswith("| a | 3 | 82.0 ± 2.00 |")


def test_paired_effects_and_their_correlation() -> None:
    pairs = paired_effects(_experiment(), VALUES)
    assert list(pairs["variance_drop"]) == pytest.approx([2.5, 1.5, 0.8])
    assert list(pairs["r1_gain"]) == pytest.approx([10.0, 9.0, 11.0])
    assert pairs["log_variance_ratio"].iloc[0] == pytest.approx(math.log10(3.0 / 0.5))
    r, n = pearson(pairs["variance_drop"], pairs["r1_gain"])
    assert n == 3
    assert r == pytest.approx(pd.Series([2.5, 1.5, 0.8]).corr(pd.Series([10.0, 9.0, 11.0])))
    assert math.isnan(pearson(pd.Series([1.0, 2.0]), pd.Series([1.0, 2.0]))[0])
