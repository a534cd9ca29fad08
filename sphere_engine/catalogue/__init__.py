"""The metric catalogue: every logged statistic declared once, torch-free.

Import it anywhere (the dashboard, db readers, the CLI) without loading torch.
"""

from sphere_engine.catalogue.entries import (
    CHART_GROUPS,
    CHART_SECTIONS,
    MAIN_METRICS,
    METRICS,
    PAPER_TABLE,
    PAPER_TABLE_OPTIONAL,
    RUNS_TABLE,
)
from sphere_engine.catalogue.lookup import (
    chart_groups,
    find,
    group_keys,
    header,
    key_metrics,
    label,
    main_metric,
    qualified_columns,
)
from sphere_engine.catalogue.metric import (
    QUALIFIER,
    ChartGroup,
    Metric,
    Source,
    column_key,
    split_column_key,
)
from sphere_engine.catalogue.numbers import format_number, vega_number_expr

__all__ = [
    "CHART_GROUPS",
    "CHART_SECTIONS",
    "MAIN_METRICS",
    "METRICS",
    "PAPER_TABLE",
    "PAPER_TABLE_OPTIONAL",
    "QUALIFIER",
    "RUNS_TABLE",
    "ChartGroup",
    "Metric",
    "Source",
    "chart_groups",
    "column_key",
    "find",
    "format_number",
    "group_keys",
    "header",
    "key_metrics",
    "label",
    "main_metric",
    "qualified_columns",
    "split_column_key",
    "vega_number_expr",
]
