"""The Runs page's first screenful without the data grid: the newest runs as a plain
HTML table, drawn on the page's first script run (``ui.first_paint``); the grid
follows. The grid component's code is most of a fresh page's time to first content
(a bare page with ``st.dataframe`` took 1.74 s where one with a markdown table took
1.07 s on the 2-core machine)."""

from __future__ import annotations

from html import escape

import pandas as pd
import streamlit as st

from app import data
from sphere_engine.catalogue.numbers import format_number

#: Rows in the preview: about a screenful.
ROWS = 20
CSS_CLASS = "spherescope-runs-preview"


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    if isinstance(value, float):
        return format_number(value)
    return escape(str(value))


def preview(shown: pd.DataFrame) -> None:
    """The first ``ROWS`` rows of the Runs table (``data.runs_table`` with its "open"
    links), in its main columns."""
    labels = data.key_column_labels()
    columns = ["name", "status", "progress", *labels, "device", "created"]
    head = "".join(f"<th>{escape(labels.get(c, c))}</th>" for c in columns)
    rows = []
    for _, row in shown.head(ROWS).iterrows():
        cells = []
        for column in columns:
            value = row.get(column)
            if column == "name":
                name = escape(str(value or row["run_id"]))
                link = f"run?run_id={escape(row['run_id'])}"
                cells.append(f'<td><a href="{link}" target="_self">{name}</a></td>')
            elif column == "progress":
                cells.append(f"<td>{float(value or 0):.0%}</td>")
            elif column == "created" and not pd.isna(value):
                cells.append(f"<td>{pd.Timestamp(value):%Y-%m-%d %H:%M}</td>")
            else:
                cells.append(f"<td>{_cell(value)}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    st.markdown(
        f'<table class="{CSS_CLASS}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>",
        unsafe_allow_html=True,
    )
