"""Charts of a study's search: the optimisation history, parameter importances and
parallel coordinates (Altair; testable without a browser)."""

from __future__ import annotations

import altair as alt
import pandas as pd

HEIGHT = 240


def history(trials: pd.DataFrame, metric: str) -> alt.Chart:
    """Each completed trial's objective by trial number, and the best so far."""
    done = trials[trials["state"] == "complete"].sort_values("trial")
    done = done.assign(best=done["objective"].cummax())
    base = alt.Chart(done).encode(x=alt.X("trial:Q", title="trial", axis=alt.Axis(tickMinStep=1)))
    points = base.mark_circle(size=60).encode(
        y=alt.Y("objective:Q", title=f"validation {metric}", scale=alt.Scale(zero=False)),
        tooltip=["trial", alt.Tooltip("objective:Q", format=".4f"), "parameters"],
    )
    best = base.mark_line(interpolate="step-after", color="#d62728").encode(y="best:Q")
    return (points + best).properties(height=HEIGHT, title="Optimisation history")


def importance_bars(importances: dict[str, float]) -> alt.Chart:
    frame = pd.DataFrame({"parameter": list(importances), "importance": list(importances.values())})
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("importance:Q", title="importance (fANOVA)", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("parameter:N", sort="-x", title=None),
            tooltip=["parameter", alt.Tooltip("importance:Q", format=".3f")],
        )
        .properties(height=max(60, 30 * len(frame)), title="Parameter importances")
    )


def parallel_coordinates(params: pd.DataFrame) -> alt.Chart:
    """One line per completed trial through its parameters (each scaled to [0, 1] over
    the trials) and its objective; colour = objective."""
    columns = [c for c in params.columns if c not in ("trial",)]
    scaled = params.copy()
    for column in columns:
        values = pd.to_numeric(params[column], errors="coerce")
        if values.isna().any():  # categorical: its choices' ranks
            codes = params[column].astype(str).astype("category").cat.codes
            values = codes.astype(float)
        span = values.max() - values.min()
        scaled[column] = (values - values.min()) / span if span else 0.5
    long = scaled.melt(id_vars=["trial"], value_vars=columns, var_name="axis", value_name="scaled")
    raw = params.melt(id_vars=["trial"], value_vars=columns, var_name="axis", value_name="value")
    long = long.assign(value=raw["value"].astype(str))
    long = long.merge(params[["trial", "objective"]].rename(columns={"objective": "score"}))
    return (
        alt.Chart(long)
        .mark_line(point=True, opacity=0.7)
        .encode(
            x=alt.X("axis:N", sort=columns, title=None),
            y=alt.Y("scaled:Q", title="scaled value", axis=alt.Axis(format=".1f")),
            color=alt.Color("score:Q", title="objective", scale=alt.Scale(scheme="viridis")),
            detail="trial:N",
            tooltip=["trial", "axis", "value", alt.Tooltip("score:Q", format=".4f")],
        )
        .properties(height=HEIGHT, title="Parallel coordinates")
    )
