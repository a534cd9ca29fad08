"""Tables that mark each scored column's best value (the Compare page's paper table)."""

from __future__ import annotations

import pandas as pd

from app import transforms
from app.charts import formats


def highlight_best(
    table: pd.DataFrame,
    higher_is_better: dict[str, bool],
    precision: int = 2,
    exclude: pd.Series | None = None,
) -> pd.io.formats.style.Styler:
    """A Styler that bolds (and tints) the best value of each scored column (never in
    a row where ``exclude`` is True: a run that cannot be trusted).

    Numbers get at least ``precision`` decimals, more where a column needs them to
    tell its values apart (``formats.column_decimals``)."""
    best = transforms.best_rows(table, higher_is_better, exclude)
    style = "font-weight: bold; background-color: rgba(44, 160, 44, 0.25)"

    def mark(column: pd.Series) -> list[str]:
        row = best.get(str(column.name))
        return [style if row is not None and index == row else "" for index in column.index]

    styler = table.style.format(precision=precision, na_rep="–")
    styler = styler.format(formats.table_formats(table, precision), na_rep="–")
    return styler.apply(mark, axis=0)
