"""The floor the dashboard's pages are measured against: a bare Streamlit page that
draws a table of ``FLOOR_ROWS`` rows and nothing else, as a grid (``st.dataframe``,
``?table=grid``) or as a markdown table (``?table=markdown``). Run by
``bench/runs_page.py`` (under AppTest) and ``bench/dashboard_speed.py`` (served, in
the same browser), so every page's time is printed as a ratio to it, measured in the
same run on the same machine."""

from __future__ import annotations

import pandas as pd
import streamlit as st

FLOOR_ROWS = 20
TABLE = pd.DataFrame(
    {
        "name": [f"run {i}" for i in range(FLOOR_ROWS)],
        "status": ["finished"] * FLOOR_ROWS,
        "R@1": [0.5 + i / 100 for i in range(FLOOR_ROWS)],
        "norm var": [0.1 * i for i in range(FLOOR_ROWS)],
    }
)


def markdown_table(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join(lines)


st.title("Floor")
if st.query_params.get("table", "grid") == "markdown":
    st.markdown(markdown_table(TABLE))
else:
    st.dataframe(TABLE, hide_index=True)
