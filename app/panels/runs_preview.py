"""The Runs page's first screenful without the data grid: the page of runs as a plain
HTML table, drawn on the page's first script run (``ui.first_paint``); the grid
follows. The grid component's code is most of a fresh page's time to first content
(a bare page with ``st.dataframe`` took 1.74 s where one with a markdown table took
1.07 s on the 2-core machine)."""

from __future__ import annotations

from html import escape

import pandas as pd
import streamlit as st

from app.panels import runs_columns, runs_icons

#: Rows in the preview: about a screenful.
ROWS = 20
CSS_CLASS = "spherescope-runs-preview"


def preview(shown: pd.DataFrame, headers: dict[str, str]) -> None:
    """The first ``ROWS`` rows of ``runs_columns.display_table`` in its leading columns;
    ``headers``: the metric columns' headers."""
    columns = [
        "name", runs_columns.MAIN, *runs_columns.BESIDE_NAME, "status", "findings", "progress",
        runs_columns.DISK, "created",
    ]  # fmt: skip
    head = "".join(f"<th>{escape(headers.get(c, c))}</th>" for c in columns)
    rows = []
    for _, row in shown.head(ROWS).iterrows():
        cells = []
        for column in columns:
            value = row.get(column)
            if column == "name":
                name = escape(str(value or row["run_id"]))
                link = f"run?run_id={escape(row['run_id'])}"
                cells.append(f'<td><a href="{link}" target="_self">{name}</a></td>')
            elif column == "status":
                marker = runs_icons.img(row.get(runs_columns.TRUST), "untrusted result")
                cells.append(f"<td>{escape(str(value))} {marker}</td>")
            elif column == "findings":
                cells.append(f"<td>{runs_icons.img(value, 'findings')}</td>")
            elif column == "progress":
                cells.append(f"<td>{float(value or 0):.0%}</td>")
            elif column == "created":
                text = "" if pd.isna(value) else f"{pd.Timestamp(value):%Y-%m-%d %H:%M}"
                cells.append(f"<td>{text}</td>")
            else:
                cells.append(f"<td>{escape(str(value))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    st.markdown(
        f'<table class="{CSS_CLASS}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>",
        unsafe_allow_html=True,
    )
