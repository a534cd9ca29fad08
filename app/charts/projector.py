"""The projector's scatter: the 20 largest classes in distinct colours, the rest grey;
classes found with the page's search drawn on top, the others faded."""

from __future__ import annotations

from collections.abc import Collection

import altair as alt
import pandas as pd

from app.charts.base import finish, number_text_transform, number_tooltip
from app.charts.geometry import class_names
from app.charts.palette import RUN_PALETTE

MAX_COLOURS = len(RUN_PALETTE)  # 20: beyond that, colours stop telling classes apart
OTHER, OTHER_COLOUR = "other", "#c7c7c7"


def colour_classes(labels: pd.Series) -> list[str]:
    """The classes that get a colour of their own: the ``MAX_COLOURS`` largest (ties by
    name), in name order."""
    names = class_names(labels)
    counts = names.value_counts()
    ranked = sorted(counts.index, key=lambda name: (-counts[name], name))
    return sorted(ranked[:MAX_COLOURS])


def projector_scatter(
    points: pd.DataFrame, title: str, found: Collection[str] = ()
) -> alt.TopLevelMixin:
    """``points`` (x, y, label, norm, point, and optionally image: a data URI) as dots;
    ``found``: class names to stand out."""
    names = class_names(points["label"])
    coloured = colour_classes(points["label"])
    frame = points.assign(
        name=names,
        colour=[name if name in coloured else OTHER for name in names],
        found=names.isin(list(found)) if found else True,
    )
    # found classes drawn last (on top): a number to order by (a nominal order is
    # no order, and Vega warned about it on every draw)
    frame = frame.assign(on_top=frame["found"].astype(int))
    has_other = bool((frame["colour"] == OTHER).any())
    domain = [*coloured, *([OTHER] if has_other else [])]
    palette = [*RUN_PALETTE[: len(coloured)], *([OTHER_COLOUR] if has_other else [])]
    chart = (
        number_text_transform(alt.Chart(frame), "norm")
        .mark_circle(size=18)
        .encode(
            x=alt.X("x:Q", title=None, axis=alt.Axis(labels=False, ticks=False)),
            y=alt.Y("y:Q", title=None, axis=alt.Axis(labels=False, ticks=False)),
            color=alt.Color(
                "colour:N",
                title="class",
                scale=alt.Scale(domain=domain, range=palette),
                legend=alt.Legend(columns=2, symbolLimit=MAX_COLOURS + 1),
            ),
            opacity=alt.condition("datum.found", alt.value(0.85), alt.value(0.08)),
            order=alt.Order("on_top:Q"),
            tooltip=[
                alt.Tooltip("name:N", title="class"),
                alt.Tooltip("point:Q", title="point"),
                number_tooltip("norm", "‖f‖"),
                # a data URI under the key "image": vega-tooltip shows it as a picture
                *([alt.Tooltip("image:N", title="image")] if "image" in points else []),
            ],
        )
        .properties(height=420, width="container")
        .interactive()
    )
    return finish(chart, None, title)
