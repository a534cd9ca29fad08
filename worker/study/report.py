"""The result table of a study as Markdown, CSV or JSON (``spherescope study report``,
the reproduction report's study sections)."""

from __future__ import annotations

import csv
import io
import json
import math

from worker.study.results import NO_DIFFERENCE, StudyResults

FORMATS = ("md", "csv", "json")
EVALUATION_TITLES = {
    "separated": "separated (mean of the fold models)",
    "concatenated": "concatenated (fold models' embeddings joined)",
    "test": "test",
}


def _pct(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{100 * value:.2f}"


def interval_text(mean: float, low: float, high: float) -> str:
    if math.isnan(low):
        return f"{_pct(mean)}"
    return f"{_pct(mean)} ± {_pct((high - low) / 2)}"


def markdown(results: StudyResults) -> str:
    spec = results.spec
    lines = [
        f"### Study {results.study_id}",
        "",
        f"{len(spec.arms)} arms × {spec.trials} trials, objective validation {spec.metric} "
        f"averaged over {spec.folds} fold(s); best setting of each arm retrained "
        f"{spec.reproductions} times. Test metrics in %, mean ± half the 95 % confidence "
        "interval (Student t over the reproductions).",
        "",
    ]
    present = {row.evaluation for row in results.rows}
    evaluations = [e for e in EVALUATION_TITLES if e in present]
    metrics = ("precision@1", "r_precision", "map@r")
    titles = {"precision@1": "P@1", "r_precision": "R-Precision", "map@r": "MAP@R"}
    for evaluation in evaluations:
        lines += [
            f"**{EVALUATION_TITLES.get(evaluation, evaluation)}**",
            "",
            "| arm | n | " + " | ".join(titles[m] for m in metrics) + " |",
            "|---|---|" + "---|" * len(metrics),
        ]
        for arm in spec.arms:
            cells = []
            n = 0
            for metric in metrics:
                row = next(
                    (
                        r
                        for r in results.rows
                        if (r.arm, r.evaluation, r.metric) == (arm.name, evaluation, metric)
                    ),
                    None,
                )
                cells.append(
                    "–" if row is None else interval_text(row.mean, row.ci_low, row.ci_high)
                )
                n = max(n, row.n if row else 0)
            lines.append(f"| {arm.name} | {n} | " + " | ".join(cells) + " |")
        lines.append("")
    if not evaluations:
        lines += ["No reproduction has finished yet.", ""]
    lines += ["| arm | trials | best validation | best setting |", "|---|---|---|---|"]
    for arm in spec.arms:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(results.trials.get(arm.name, {}).items()))
        best = results.best.get(arm.name)
        setting = ", ".join(f"{k} = {_short(v)}" for k, v in (best or {}).items()) or "–"
        value = results.best_value.get(arm.name)
        best_text = "–" if value is None else f"{value:.4f}"
        lines.append(f"| {arm.name} | {counts or '–'} | {best_text} | {setting} |")
    lines.append("")
    if results.comparisons:
        lines += [
            "Pairwise comparisons (Welch's t, Holm-corrected within each metric):",
            "",
            "| evaluation | metric | arms | difference | p (Holm) | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for c in results.comparisons:
            p = "–" if math.isnan(c.p_holm) else f"{c.p_holm:.3g}"
            lines.append(
                f"| {c.evaluation} | {titles.get(c.metric, c.metric)} | {c.arm_a} vs {c.arm_b} | "
                f"{100 * c.difference:+.2f} | {p} | {c.verdict} |"
            )
        lines.append("")
        lines.append(
            f'"{NO_DIFFERENCE}": the confidence intervals overlap or the corrected p ≥ 0.05.'
        )
    return "\n".join(lines) + "\n"


def _short(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def csv_text(results: StudyResults) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["arm", "evaluation", "metric", "mean", "ci_low", "ci_high", "n", "best_setting"]
    )
    for row in results.rows:
        writer.writerow([
            row.arm, row.evaluation, row.metric, row.mean, row.ci_low, row.ci_high, row.n,
            json.dumps(results.best.get(row.arm, {}), sort_keys=True),
        ])  # fmt: skip
    return out.getvalue()


def render(results: StudyResults, fmt: str) -> str:
    if fmt == "md":
        return markdown(results)
    if fmt == "csv":
        return csv_text(results)
    if fmt == "json":
        return json.dumps(results.to_dict(), indent=1, sort_keys=True) + "\n"
    raise ValueError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")


def study_duration_s(results: StudyResults, home: str) -> float | None:
    """Seconds from the study's first run's creation to its last run's end."""
    from db.store import RunStore
    from worker.study.runs import study_runs

    runs = study_runs(RunStore(home), results.study_id)
    starts = [r.record.created_at for r in runs if r.record.created_at]
    ends = [r.record.finished_at for r in runs if r.record.finished_at]
    if not starts or not ends:
        return None
    return (max(ends) - min(starts)).total_seconds()


def study_sections(home: str) -> list[str]:
    """One report section per experiment key, from its newest study (``spherescope
    report``'s studies)."""
    from worker.study.results import study_results
    from worker.study.storage import list_study_ids, load_study_spec

    newest: dict[str, str] = {}
    for study_id in list_study_ids(home):
        spec = load_study_spec(home, study_id)
        newest[spec.experiment or spec.name] = study_id
    sections = []
    for key, study_id in newest.items():
        results = study_results(home, study_id)
        seconds = study_duration_s(results, home)
        took = (
            ""
            if seconds is None
            else f" It took {seconds / 60:.1f} minutes (first run queued to last run ended)."
        )
        spec = results.spec
        header = (
            f"## Study `{key}`\n\nA fair comparison (`spherescope study run`, README "
            f'"Comparing methods fairly"): {spec.sampler} search, {spec.trials} trials per arm, '
            f"{spec.folds} class-disjoint validation fold(s), best setting retrained "
            f"{spec.reproductions} times and tested once.{took}\n\n"
        )
        sections.append(header + markdown(results).split("\n", 1)[1].lstrip())
    return sections
