"""Number formats for tables: enough decimals that the values of a column tell the runs apart.

A fixed precision (two decimals) turns 0.000605 and 0.00746 into "0.00" and "0.01"
and highlights a "0.00" as best; ``column_decimals`` picks, per column, the fewest
decimals (at least ``minimum``) with which every non-zero value keeps two significant
digits and distinct values stay distinct.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

#: More decimals than this say nothing a float64 metric can mean.
MAX_DECIMALS = 10
SIGNIFICANT = 2


def column_decimals(values: Iterable[float], minimum: int = 2) -> int:
    """Decimals for a column so that each non-zero value shows ≥ 2 significant digits
    and values that differ (relative 1e-9) are printed differently."""
    finite = np.asarray([v for v in values if v is not None], dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return minimum
    nonzero = np.abs(finite[finite != 0])
    decimals = minimum
    if nonzero.size:  # two significant digits for the smallest magnitude
        exponent = math.floor(math.log10(float(nonzero.min())))
        decimals = max(decimals, SIGNIFICANT - 1 - exponent)
    distinct = np.unique(np.round(finite, 12))
    while decimals < MAX_DECIMALS and len({f"{v:.{decimals}f}" for v in distinct}) < len(distinct):
        decimals += 1
    return min(decimals, MAX_DECIMALS)


def table_formats(table: pd.DataFrame, minimum: int = 2) -> dict[str, str]:
    """A ``Styler.format`` mapping: numeric column → "{:,.Nf}" with ``column_decimals``."""
    formats = {}
    for column in table.columns:
        if pd.api.types.is_numeric_dtype(table[column]) and not pd.api.types.is_bool_dtype(
            table[column]
        ):
            # thousands separators, as every number here (sphere_engine.catalogue.numbers)
            formats[column] = f"{{:,.{column_decimals(table[column], minimum)}f}}"
    return formats
