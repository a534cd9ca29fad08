"""Altair chart builders: pure functions DataFrame → chart, testable without a browser.

Every builder caps the rows it embeds at ``MAX_POINTS`` (downsampling per series on a
shared x grid) and, when it had to drop points or was handed already-downsampled
data, records "N of M points" in the chart's ``usermeta["points_note"]``; the pages
show that note as a caption under the chart (``app.ui.show_chart``).

Callers import a builder from its module: ``line_charts`` (per-step lines and bands,
run colours), ``heatmap`` and ``step_heatmap`` / ``similarity_heatmap`` (distributions
over steps), ``geometry`` (snapshots), ``summary`` (small multiples, hyperparameters),
``best_values`` (tables), ``findings``, ``projector``, ``sphere_view``; ``base`` holds
the shared axes, caps and notes, ``palette`` the colours, ``formats`` number formats.
"""
