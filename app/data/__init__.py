"""The dashboard's data layer; pages call ``data.<function>`` and never touch SQL,
the store's files or torch.

- ``cache``: the configured store and ``store_read``, the one caching helper;
- ``reads``: cached reads over ``db.queries`` (runs, names, series, final values,
  snapshots, checkpoints, the log tail);
- ``evals``: evaluation metrics shaped like per-step series; ``live``: incremental reads
  for live pages;
- ``tables``: table shaping (labels, default picks, the Runs table, grouping);
- ``paper``: the SEC paper's final table, from the metric catalogue;
- ``geometry``: projections, centroid angles and head vertices of snapshots;
- ``findings``: a run's findings and the Runs-table badges;
- ``actions``: launch, cancel, delete, tags, notes;
- ``components``: the registries and config checks the launch form uses;
- ``status_texts``: what pages say about a run's status (declared once).
"""

from app.data.actions import (
    cancel_run,
    delete_run,
    launch_runs,
    launch_sweep,
    new_sweep_id,
    set_notes,
    set_tags,
    submit_slurm_run,
)
from app.data.cache import home, store
from app.data.components import (
    backbone_sizes,
    component_names,
    component_params,
    config_error,
    default_config,
    registries,
    sweep_error,
)
from app.data.evals import eval_metric_series, grouped_eval_series
from app.data.findings import badges as finding_badges
from app.data.findings import findings, untrusted_runs
from app.data.geometry import (
    centroid_angles,
    fixed_head,
    head_vertices,
    pca,
    polytope_vertices,
    principal_components,
)
from app.data.live import LiveSeries, mark_watched
from app.data.paper import final_by_config, grouped_paper_table, paper_best, paper_table
from app.data.projects import PROJECT_KEY, projects, runs, selected_project
from app.data.reads import (
    Totals,
    checkpoints,
    config_diff,
    coordinate_columns,
    eval_names,
    eval_series,
    final_metrics,
    latest_metrics,
    metric_names,
    metric_series,
    points_total,
    robustness_values,
    roc_curves,
    run,
    run_log_tail,
    running_evaluation,
    sample_norms,
    snapshot,
    snapshot_steps,
)
from app.data.status_texts import gpu_worker_alive, no_metrics_message, waiting_note
from app.data.tables import (
    ACTIVE_STATUSES,
    KEY_COLUMNS,
    RUNS_SHOWN,
    column_label,
    config_values,
    elapsed_seconds,
    flatten_config,
    grouped_series,
    is_active,
    key_column_labels,
    metric_choice_label,
    metric_key,
    preferred_runs,
    progress_fraction,
    run_labels,
    run_progress,
    runs_table,
    series_csv,
    sweeps,
    tags,
    to_wide,
)

__all__ = [
    "ACTIVE_STATUSES",
    "KEY_COLUMNS",
    "PROJECT_KEY",
    "RUNS_SHOWN",
    "LiveSeries",
    "Totals",
    "backbone_sizes",
    "cancel_run",
    "centroid_angles",
    "checkpoints",
    "column_label",
    "component_names",
    "component_params",
    "config_diff",
    "config_error",
    "config_values",
    "coordinate_columns",
    "default_config",
    "delete_run",
    "elapsed_seconds",
    "eval_metric_series",
    "eval_names",
    "eval_series",
    "final_by_config",
    "final_metrics",
    "finding_badges",
    "findings",
    "fixed_head",
    "flatten_config",
    "gpu_worker_alive",
    "grouped_eval_series",
    "grouped_paper_table",
    "grouped_series",
    "head_vertices",
    "home",
    "is_active",
    "key_column_labels",
    "latest_metrics",
    "launch_runs",
    "launch_sweep",
    "mark_watched",
    "metric_choice_label",
    "metric_key",
    "metric_names",
    "metric_series",
    "new_sweep_id",
    "no_metrics_message",
    "paper_best",
    "paper_table",
    "pca",
    "points_total",
    "polytope_vertices",
    "preferred_runs",
    "principal_components",
    "progress_fraction",
    "projects",
    "registries",
    "robustness_values",
    "roc_curves",
    "run",
    "run_labels",
    "run_log_tail",
    "run_progress",
    "running_evaluation",
    "runs",
    "runs_table",
    "sample_norms",
    "selected_project",
    "series_csv",
    "set_notes",
    "set_tags",
    "snapshot",
    "snapshot_steps",
    "store",
    "submit_slurm_run",
    "sweep_error",
    "sweeps",
    "tags",
    "to_wide",
    "untrusted_runs",
    "waiting_note",
]
