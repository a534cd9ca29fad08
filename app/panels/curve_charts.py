"""Chart builders of the evaluation curves: pure functions DataFrame → Altair chart."""

from __future__ import annotations

import altair as alt
import pandas as pd

from app.charts.base import (
    CHART_HEIGHT,
    log_axis,
    log_scale,
    number_text_transform,
    number_tooltip,
)
from app.charts.line_charts import run_color_scale
from sphere_engine.catalogue import Source, column_key

ROBUSTNESS_TITLES = {"accuracy": "accuracy under attack", "recall@1": "R@1 under attack"}


def roc_chart(curves: pd.DataFrame, labels: dict[str, str] | None = None) -> alt.Chart:
    """TAR against FAR (log-scaled FAR axis), one line per run; ``curves``: run_id,
    far, tar (and point for the order along the curve). FAR = 0 has no log position
    and is left out."""
    labels = labels or {}
    run_ids = sorted(curves["run_id"].unique())
    frame = curves[curves["far"] > 0].assign(
        run=lambda f: f["run_id"].map(lambda r: labels.get(r, r))
    )
    return (
        number_text_transform(alt.Chart(frame), "tar")
        .mark_line(point=alt.OverlayMarkDef(size=12))
        .encode(
            x=alt.X(
                "far:Q",
                title="false accept rate (FAR)",
                scale=log_scale(),
                axis=log_axis(format=".0e", labelExpr=None),
            ),
            y=alt.Y("tar:Q", title="true accept rate (TAR)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("run:N", scale=run_color_scale(run_ids, labels), title="run"),
            order="point:Q",
            tooltip=[
                "run:N",
                alt.Tooltip("far:Q", format=".2e"),
                number_tooltip("tar"),
            ],
        )
        .properties(height=CHART_HEIGHT, title=alt.TitleParams("Verification ROC", anchor="start"))
    )


def robustness_chart(
    values: pd.DataFrame, metric: str, labels: dict[str, str] | None = None
) -> alt.Chart:
    """``metric`` (accuracy or recall@1) against ε, one colour per run and one dash per
    attack; ``values``: run_id, attack, metric, epsilon, value."""
    labels = labels or {}
    run_ids = sorted(values["run_id"].unique())
    frame = values[values["metric"] == metric].assign(
        run=lambda f: f["run_id"].map(lambda r: labels.get(r, r))
    )
    title = ROBUSTNESS_TITLES.get(metric, metric)
    return (
        number_text_transform(alt.Chart(frame), "value")
        .mark_line(point=True)
        .encode(
            x=alt.X("epsilon:Q", title="ε (pixel units)"),
            y=alt.Y("value:Q", title=title, scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("run:N", scale=run_color_scale(run_ids, labels), title="run"),
            strokeDash=alt.StrokeDash("attack:N", title="attack"),
            tooltip=["run:N", "attack:N", "epsilon:Q", number_tooltip("value")],
        )
        .properties(
            height=CHART_HEIGHT, title=alt.TitleParams(f"Robustness: {title}", anchor="start")
        )
    )


def tar_table(finals: pd.DataFrame, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per run: run, then TAR@FAR columns (FAR descending), EER, AUC and
    10-fold accuracy, from ``final_metrics`` columns ``eval:verification/...``."""
    labels = labels or {}
    prefix = column_key(Source.EVALUATION, "verification/")
    tar_columns = sorted(
        (c for c in finals.columns if c.startswith(prefix + "tar@far=")),
        key=lambda c: -float(c.rsplit("=", 1)[1]),
    )
    others = [prefix + k for k in ("eer", "auc", "accuracy")]
    columns = [c for c in [*tar_columns, *others] if c in finals.columns]
    table = pd.DataFrame({"run": finals["run_id"].map(lambda r: labels.get(r, r))})
    headers = {"eer": "EER", "auc": "ROC AUC", "accuracy": "accuracy (10-fold)"}
    for column in columns:
        key = column.removeprefix(prefix)
        header = headers.get(key, key.replace("tar@far=", "TAR@FAR="))
        table[header] = pd.to_numeric(finals[column], errors="coerce").to_numpy()
    return table
