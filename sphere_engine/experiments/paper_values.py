"""What a not-yet-run experiment shows: the paper's values, and what running it needs."""

from __future__ import annotations

import pandas as pd

from sphere_engine.experiments.spec import Experiment


def paper_table(experiment: Experiment) -> pd.DataFrame:
    """One row per variant, one column per metric with a paper value (display units)."""
    rows = []
    for variant in experiment.variants:
        row: dict[str, object] = {"variant": variant.name}
        for metric in experiment.metrics:
            if metric.key in variant.reference:
                row[f"{metric.label} (paper)"] = variant.reference[metric.key]
        rows.append(row)
    return pd.DataFrame(rows)


def not_run_message(experiment: Experiment) -> str:
    """The line shown until the experiment has runs: the command, and what it needs."""
    command = f"spherescope reproduce {experiment.name}"
    if experiment.needs_data_root:
        command += " --data-root <folder>"
    if experiment.requirements:
        needs = experiment.requirements
        return f"Not run yet: {needs}. Run `{command} --launch` where it has them."
    return f"Not run yet: `{command} --local` (or `--launch`)."
