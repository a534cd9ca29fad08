"""The findings over the labelled corpus of runs (tests/sphere_engine/findings/corpus,
written by scripts/findings_corpus.py): no rule may lose precision or recall against
the scores the calibration stored, healthy runs raise no warning, and only runs whose
result cannot be trusted get a critical finding."""

from __future__ import annotations

import json
import math

import pytest

from sphere_engine.findings.calibration import CORPUS, false_alarms, load_corpus, score

CPU_PRESETS = ("sec-ablation", "sec-losses", "sec-bn-wn", "sec-optimizers", "sec-simclr",
               "isotropic", "smoke")  # fmt: skip


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def test_the_corpus_holds_every_cpu_preset_and_every_failure_mode(corpus) -> None:
    from app.presets import PRESETS

    groups = {}
    for run in corpus:
        groups.setdefault(run.group, set()).add(run.name)
    for key in CPU_PRESETS:
        for name in PRESETS[key].names:
            parts = name.split(" | ")
            group = f"preset:{key}/{parts[1] if len(parts) == 3 else name}"
            assert len(groups.get(group, ())) >= 3, group  # three seeds at least
    assert len(groups["launch-default"]) >= 3
    for label in ("diverged", "never_learned", "collapsed", "norms_to_eps", "overfit",
                  "unbalanced", "off_vertices"):  # fmt: skip
        labelled = [run for run in corpus if run.labels.get(label)]
        assert {run.half for run in labelled} == {"calibrate", "report"}, label


def test_no_rule_loses_precision_or_recall_on_the_corpus(corpus) -> None:
    expected = json.loads((CORPUS / "expected_scores.json").read_text())
    halves = {"report": [run for run in corpus if run.half == "report"], "all": corpus}
    for half, runs in halves.items():
        measured = score(runs).set_index("rule")
        for rule, floor in expected[half].items():
            for column in ("precision", "recall"):
                if floor[column] is None or math.isnan(floor[column]):
                    continue
                value = measured.loc[rule, column]
                assert value >= floor[column] - 1e-9, (half, rule, column, value, floor)


def test_healthy_runs_raise_no_warning_and_trusted_runs_no_critical(corpus) -> None:
    alarms = false_alarms(corpus)
    assert alarms.empty, alarms.to_string()
    # digits' untrained embeddings reach R@1 ≈ 0.97, so a third of the preset runs end
    # 0.1 below it ("degraded") or lose 3 points from their best ("overfit"): those may
    # get a warning; the others are the healthy ones
    healthy = [run for run in corpus if run.healthy_preset]
    assert len(healthy) >= 70
