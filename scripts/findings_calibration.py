"""Calibrate the findings' thresholds on one half of the labelled corpus and report their
precision and recall on the other (README: "How findings are calibrated").

    PYTHONPATH=. python scripts/findings_calibration.py [--write]

For each rule, its main threshold is swept over a grid on the ``calibrate`` half: the
value kept is the one with the best F1 that raises no warning or critical on a healthy
run (ties: the value in the code). The table printed is measured on the ``report`` half
with the thresholds in the code; ``--write`` stores it as the floor the test
(tests/sphere_engine/findings/test_corpus.py) holds every later change to.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
from contextlib import contextmanager
from pathlib import Path

from sphere_engine.findings.calibration import CORPUS, false_alarms, load_corpus, score

#: (rule, module, constant, grid): the threshold each rule is calibrated on.
SWEEPS = (
    ("diverged", "divergence", "GROWTH_LIMIT", (1e2, 1e3, 1e4, 1e5, 1e6, 1e8)),
    ("dead_loss", "loss_activity", "START_SHARE", (0.0, 0.02, 0.05, 0.1, 0.2, 0.4)),
    ("unbalanced_directions", "direction_balance", "CORRELATION_LIMIT", (0.1, 0.2, 0.3, 0.4, 0.5)),
    ("unbalanced_directions", "direction_balance", "WARN_CV", (0.2, 0.25, 0.3, 0.35, 0.4, 0.5)),
    ("norms_shrinking", "norm_shrinking", "SMALL_NORM", (1e-4, 1e-3, 1e-2, 1e-1)),
    ("collapse", "collapse", "UNIFORMITY_COLLAPSED", (-0.5, -0.3, -0.1, -0.05, -0.01, -1e-3)),
    ("overfitting", "evaluation_trend", "DROP", (0.01, 0.02, 0.03, 0.05, 0.1)),
    ("norms_shrinking", "norm_shrinking", "SHRINK_FACTOR", (1e-3, 1e-2, 1e-1, 0.5)),
    ("centroids_off_vertices", "vertices", "OFF_VERTEX_DEG", (5.0, 10.0, 20.0, 30.0)),
)
EXPECTED = "expected_scores.json"


@contextmanager
def threshold(module: str, constant: str, value: float):
    rules = importlib.import_module(f"sphere_engine.findings.rules.{module}")
    kept = getattr(rules, constant)
    setattr(rules, constant, value)
    try:
        yield
    finally:
        setattr(rules, constant, kept)


def f1(row) -> float:
    p, r = row["precision"], row["recall"]
    return 0.0 if not p or not r or math.isnan(p) or math.isnan(r) else 2 * p * r / (p + r)


def markdown(table) -> str:
    lines = [
        "| rule | label | runs labelled | fired | precision | recall |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in table.to_dict("records"):
        cells = ["–" if math.isnan(row[k]) else f"{row[k]:.2f}" for k in ("precision", "recall")]
        lines.append(
            f"| `{row['rule']}` | {row['label']} | {row['labelled']} | {row['fired']} | "
            f"{cells[0]} | {cells[1]} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"store the scores in {EXPECTED}")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
    runs = load_corpus(args.corpus)
    calibrate = [run for run in runs if run.half == "calibrate"]
    report = [run for run in runs if run.half == "report"]
    print(f"corpus: {len(runs)} runs ({len(calibrate)} calibrate, {len(report)} report)\n")
    print("Threshold sweeps on the calibrate half (F1, alarms on healthy runs):")
    for rule, module, constant, grid in SWEEPS:
        current = getattr(importlib.import_module(f"sphere_engine.findings.rules.{module}"),
                          constant)  # fmt: skip
        results = []
        for value in grid:
            with threshold(module, constant, value):
                row = score(calibrate).set_index("rule").loc[rule]
                alarms = false_alarms(calibrate)
                alarms = int((alarms["finding"] == rule).sum()) if len(alarms) else 0
            results.append((value, f1(row), alarms))
        allowed = [r for r in results if r[2] == 0] or results
        best = max(r[1] for r in allowed)
        chosen = [r[0] for r in allowed if r[1] == best]
        keep = current if current in chosen else chosen[0]
        cells = "  ".join(f"{v:g}: F1 {f:.2f}, {a} alarms" for v, f, a in results)
        print(f"  {rule}.{constant} (code: {current:g}, best: {keep:g}): {cells}")
    table = score(report)
    print("\nOn the report half, with the thresholds in the code:\n")
    print(markdown(table))
    alarms = false_alarms(runs)
    print(f"\nWarnings or criticals on healthy runs, criticals on trusted runs: {len(alarms)}")
    if len(alarms):
        print(alarms.to_string())
    whole = score(runs)
    print("\nOn the whole corpus:\n")
    print(markdown(whole))
    if args.write:
        expected = {
            half: score(part).set_index("rule")[["precision", "recall"]].to_dict("index")
            for half, part in (("report", report), ("all", runs))
        }
        (args.corpus / EXPECTED).write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
        print(f"\nwritten: {args.corpus / EXPECTED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
