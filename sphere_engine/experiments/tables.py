"""The report's tables (the verdicts: ``verdicts``), computed from a frame of per-run values.

Pure pandas over the declarations: no torch, no store. ``values`` has one row per run
with columns ``variant``, ``seed`` and one column per metric key of the experiment
(as ``db.experiment_runs.experiment_values`` returns it).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sphere_engine.catalogue.numbers import format_number
from sphere_engine.experiments.spec import Experiment, Metric

SUMMARY_COLUMNS = ["variant", "metric", "mean", "std", "n", "paper"]


def summary(experiment: Experiment, values: pd.DataFrame) -> pd.DataFrame:
    """Long table: per declared variant and metric the seed mean, std (ddof 1), n and the
    paper's value (all in the metric's display unit: ×100 for percentages)."""
    rows = []
    for variant in experiment.variants:
        chosen = values[values["variant"] == variant.name]
        for metric in experiment.metrics:
            column = chosen[metric.key] if metric.key in chosen else pd.Series(dtype=float)
            measured = column.dropna().to_numpy(dtype=float) * _scale(metric)
            paper = variant.reference.get(metric.key, math.nan)
            rows.append(
                {
                    "variant": variant.name,
                    "metric": metric.label,
                    "mean": float(measured.mean()) if len(measured) else math.nan,
                    "std": float(measured.std(ddof=1)) if len(measured) > 1 else math.nan,
                    "n": len(measured),
                    "paper": paper,
                }
            )
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def display_table(experiment: Experiment, values: pd.DataFrame) -> pd.DataFrame:
    """Wide table of text cells: a row per variant, "mean ± std" per metric, n, and a
    "(paper)" column beside each metric that has a paper value."""
    long = summary(experiment, values)
    with_paper = set(long.loc[long["paper"].notna(), "metric"])
    rows = []
    for variant in experiment.variants:
        part = long[long["variant"] == variant.name].set_index("metric")
        row = {"variant": variant.name, "n": int(part["n"].max()) if len(part) else 0}
        for metric in experiment.metrics:
            cell = part.loc[metric.label]
            row[metric.label] = format_mean_std(cell["mean"], cell["std"])
            if metric.label in with_paper:
                row[f"{metric.label} (paper)"] = format_number(cell["paper"])
        rows.append(row)
    return pd.DataFrame(rows)


PAIR_COLUMNS = ["pair", "seed", "variance_drop", "log_variance_ratio", "r1_gain"]


def paired_effects(
    experiment: Experiment,
    values: pd.DataFrame,
    variance_key: str = "train_mean:norm/var",
    accuracy_key: str = "recall@1",
) -> pd.DataFrame:
    """Per declared (baseline, treatment) pair and seed: the drop of the training norm
    variance (baseline − treatment), the same drop on a log scale, log10(baseline /
    treatment) (comparable across losses whose norms differ by orders of magnitude),
    and the R@1 gain in points (treatment − baseline)."""
    rows = []
    indexed = values.set_index(["variant", "seed"]) if len(values) else None
    for baseline, treatment in experiment.pairs:
        for seed in sorted(set(values["seed"])) if len(values) else []:
            try:
                base = indexed.loc[(baseline, seed)]
                treat = indexed.loc[(treatment, seed)]
            except KeyError:
                continue
            rows.append(
                {
                    "pair": baseline,
                    "seed": int(seed),
                    "variance_drop": float(base[variance_key] - treat[variance_key]),
                    "log_variance_ratio": _log_ratio(base[variance_key], treat[variance_key]),
                    "r1_gain": 100.0 * float(treat[accuracy_key] - base[accuracy_key]),
                }
            )
    return pd.DataFrame(rows, columns=PAIR_COLUMNS).dropna()


def _log_ratio(numerator: float, denominator: float) -> float:
    if not (numerator > 0 and denominator > 0):
        return math.nan
    return float(math.log10(numerator / denominator))


def pearson(x: pd.Series, y: pd.Series) -> tuple[float, int]:
    """Pearson r and n (NaN when fewer than 3 points or no spread)."""
    n = len(x)
    if n < 3 or np.std(x) == 0 or np.std(y) == 0:
        return math.nan, n
    return float(np.corrcoef(x, y)[0, 1]), n


def format_mean_std(mean: float, std: float) -> str:
    if math.isnan(mean):
        return "–"
    if math.isnan(std):
        return format_number(mean)
    return f"{format_number(mean)} ± {format_number(std)}"


def _scale(metric: Metric) -> float:
    return 100.0 if metric.percent else 1.0


def to_markdown(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a frame's cells (as text, index dropped)."""
    header = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in frame.itertuples(index=False):
        cells = [str(cell).replace("|", "\\|") for cell in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
