"""How a number is written, everywhere a person reads one: the Run page's tiles, the
tables, the charts' axes and tooltips, the reproduction report.

Three significant digits, never fewer integer digits than the number has, thousands
separators, and scientific notation outside [1e-3, 1e7) where decimals stop reading
well. ``VEGA_LABEL_EXPR`` is the same rule as a Vega expression (the charts' axes and
tooltips), so a value reads the same in a tile, a table cell and a chart.
"""

from __future__ import annotations

import math

SIGNIFICANT = 3
#: Outside [SMALL, LARGE) a non-zero number is written in scientific notation.
SMALL = 1e-3
LARGE = 1e7


def format_number(value: float | None, significant: int = SIGNIFICANT) -> str:
    """``value`` with ``significant`` significant digits and thousands separators
    ("–" for a missing or non-finite value)."""
    if value is None:
        return "–"
    value = float(value)
    if not math.isfinite(value):
        return "–"
    if value != 0 and not SMALL <= abs(value) < LARGE:
        mantissa, exponent = f"{value:.{significant - 1}e}".split("e")
        return f"{mantissa}e{int(exponent):+d}"  # 6.05e-4, as the charts' d3 writes it
    decimals = max(significant - 1 - math.floor(math.log10(abs(value))), 0) if value else 0
    return f"{value:,.{decimals}f}"


def vega_number_expr(field: str, significant: int = SIGNIFICANT, trim: bool = False) -> str:
    """A Vega expression that writes ``field`` (e.g. ``datum.value``) as
    ``format_number`` does; ``trim``: without trailing zeros (an axis's tick values
    are round: "0.5", not "0.500")."""
    v = field
    t = "~" if trim else ""
    magnitude = f"floor(log(abs({v})) / LN10)"
    decimals = f"max({significant - 1} - {magnitude}, 0)"
    return (
        f"!isValid({v}) || !isFinite({v}) ? '–' : "
        f"{v} === 0 ? '0' : "
        f"(abs({v}) < {SMALL} || abs({v}) >= {LARGE}) ? format({v}, '.{significant - 1}{t}e') : "
        f"format({v}, ',.' + {decimals} + '{t}f')"
    )


#: Axis labels: ``labelExpr`` of a quantitative axis.
VEGA_LABEL_EXPR = vega_number_expr("datum.value", trim=True)
#: d3 formats of the axes that count (steps) and of seconds, with thousands separators.
D3_COUNT = ",d"
D3_SECONDS = ",.3~r"
