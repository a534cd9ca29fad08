"""The categorical palette every chart draws runs, metrics and classes with.

Its own module so that the builders' modules (``app.charts.geometry``) use it without
importing the package that re-exports them (no import cycle)."""

from __future__ import annotations

import altair as alt

#: Categorical palette for runs and classes; the domain (sorted run ids) fixes each run's
#: colour. Every colour is saturated enough to read as a thin line on white (no pastel
#: second half: class 9 and a second metric must not fade into the background), and the
#: second ten are picked far (in CIELAB) from all before them: a sweep's eleventh run
#: drawn in a shade of its first is told apart by nobody.
RUN_PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#0000e0", "#e000e0", "#606000", "#006040", "#6000a0",
    "#800040", "#0060e0", "#e00080", "#a06000", "#c0a060",
]  # fmt: skip
#: Classes (scatter plots) and metrics share the runs' palette.
CATEGORY_SCALE = alt.Scale(range=RUN_PALETTE)
