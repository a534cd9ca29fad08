"""sphere_engine.catalogue.numbers: the one way a number is written."""

from __future__ import annotations

import math

import pytest

from sphere_engine.catalogue.numbers import VEGA_LABEL_EXPR, format_number, vega_number_expr


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (0.000605, "6.05e-4"),
        (0.00746, "0.00746"),
        (0.5, "0.500"),
        (91, "91.0"),
        (1234.5, "1,234"),  # integer digits are never rounded away
        (-3.2, "-3.20"),
        (12_345_678, "1.23e+7"),
        (math.nan, "–"),
        (None, "–"),
        (math.inf, "–"),
    ],
)
def test_three_significant_digits_and_thousands_separators(value, text) -> None:
    assert format_number(value) == text


def test_the_vega_twin_uses_the_same_rule_and_trims_only_for_axes() -> None:
    tooltip = vega_number_expr("datum.v")
    assert "',.' + max(2 - floor(log(abs(datum.v)) / LN10), 0) + 'f'" in tooltip
    assert "'.2e'" in tooltip and "0.001" in tooltip and "10000000" in tooltip
    assert "'~f'" in VEGA_LABEL_EXPR and "'.2~e'" in VEGA_LABEL_EXPR
