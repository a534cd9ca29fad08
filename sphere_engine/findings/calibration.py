"""The labelled corpus the findings are calibrated on, and their precision and recall
on it (README: "How findings are calibrated"; ``scripts/findings_corpus.py`` writes it).

Each run of the corpus carries labels decided from its outcome, never from a rule
(non-finite values, Recall@1 against the untrained model, the loss curve, or the
failure a synthetic series was drawn with) and a half: thresholds are chosen on
``calibrate`` and reported on ``report``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sphere_engine.findings.finding import Detection, Severity
from sphere_engine.findings.registry import evaluate_findings
from sphere_engine.findings.run_series import RunSeries

#: The corpus in the repository.
CORPUS = Path(__file__).resolve().parents[2] / "tests" / "sphere_engine" / "findings" / "corpus"
FILES = (("real_series.parquet", "real_runs.json"),
         ("synthetic_series.parquet", "synthetic_runs.json"))  # fmt: skip
#: Which label a rule's firing (at warning or above) claims; ``dead_loss`` is read at
#: critical (what it claims then: the run never learned).
RULE_LABELS = {
    "diverged": "diverged",
    "dead_loss": "never_learned",
    "unbalanced_directions": "unbalanced",
    "norms_shrinking": "norms_to_eps",
    "collapse": "collapsed",
    "centroids_off_vertices": "off_vertices",
    "overfitting": "overfit",
}
#: The severity from which a firing counts as the rule's claim (overfitting: any, a
#: three-point drop is one, only its severity grows with the drop).
CLAIM_AT = {"dead_loss": Severity.CRITICAL, "overfitting": Severity.INFO}


@dataclass(frozen=True)
class CorpusRun:
    name: str
    group: str
    half: str
    labels: dict[str, bool]
    series: RunSeries

    @property
    def healthy_preset(self) -> bool:
        return self.group.startswith(("preset:", "launch-default", "healthy:")) and not any(
            self.labels.values()
        )


def load_corpus(folder: Path = CORPUS) -> list[CorpusRun]:
    """Every run of the corpus in ``folder``, with its series as the rules read them."""
    runs: list[CorpusRun] = []
    for series_file, runs_file in FILES:
        if not (folder / runs_file).exists():
            continue
        described = json.loads((folder / runs_file).read_text())
        frame = pd.read_parquet(folder / series_file)
        frame = frame.astype({"run": str, "source": str, "name": str, "value": float})
        for name, rows in frame.groupby("run", sort=True):
            info = described[name]
            train = rows[rows["source"] == "train"][["name", "step", "value"]]
            evals = rows[rows["source"] == "eval"][["name", "step", "value"]]
            series = RunSeries.from_long(train, evals, info.get("config"))
            runs.append(
                CorpusRun(str(name), info["group"], info["half"], dict(info["labels"]), series)
            )
    return runs


def claims(detection: Detection) -> bool:
    """Whether a detection claims its rule's label (fires at the severity that means it)."""
    at = CLAIM_AT.get(detection.name, Severity.WARNING)
    return detection.severity.rank <= at.rank


def score(runs: list[CorpusRun]) -> pd.DataFrame:
    """Per rule: the label it claims, runs with the label, firings that claim it, true
    positives, precision and recall; and per run, the warnings and criticals raised on
    healthy preset runs and the criticals on runs that can be trusted (false alarms)."""
    found = {run.name: evaluate_findings(run.series) for run in runs}
    rows = []
    for rule, label in RULE_LABELS.items():
        positive = {run.name for run in runs if run.labels.get(label)}
        fired = {
            run.name for run in runs if any(claims(d) for d in found[run.name] if d.name == rule)
        }
        hits = len(positive & fired)
        rows.append(
            {
                "rule": rule,
                "label": label,
                "labelled": len(positive),
                "fired": len(fired),
                "true positives": hits,
                "precision": hits / len(fired) if fired else float("nan"),
                "recall": hits / len(positive) if positive else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def false_alarms(runs: list[CorpusRun]) -> pd.DataFrame:
    """Warnings or criticals on healthy preset runs, and criticals on runs that can be
    trusted: one row per (run, finding, severity, message)."""
    rows = []
    for run in runs:
        for detection in evaluate_findings(run.series):
            healthy_alarm = run.healthy_preset and detection.severity is not Severity.INFO
            critical_alarm = detection.severity is Severity.CRITICAL and not run.labels.get(
                "untrustworthy"
            )
            if healthy_alarm or critical_alarm:
                rows.append(
                    {
                        "run": run.name,
                        "finding": detection.name,
                        "severity": detection.severity.value,
                        "message": detection.message,
                    }
                )
    return pd.DataFrame(rows, columns=["run", "finding", "severity", "message"])
