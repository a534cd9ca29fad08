"""``spherescope reproduce`` and ``spherescope report`` end to end on tiny runs.

Each declared experiment runs a few steps on digits with one seed through the same
in-process path as ``reproduce --local``; the report is then rendered by a fresh
``spherescope report`` process reading the store alone.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from db.store import RunStore
from sphere_engine.config import RunConfig
from sphere_engine.experiments import EXPERIMENTS, get_experiment
from worker.cli import main
from worker.reproduce import plan, reproduce

ROOT = Path(__file__).resolve().parents[2]
TINY_STEPS = 4
#: reponet's MNIST stand-in for tests only: digits as 8×8 images for LeNet++
DIGITS_FOR_MNIST = ("data.name=digits", "data.options.as_image=true", "data.batch_size=64")


@pytest.fixture
def store(tmp_path, monkeypatch) -> RunStore:
    monkeypatch.setenv("SPHERESCOPE_HOME", str(tmp_path / "home"))
    return RunStore()


def _tiny_overrides(name: str) -> tuple[str, ...]:
    return DIGITS_FOR_MNIST if get_experiment(name).needs_data_root else ()


@pytest.mark.parametrize("name", [n for n in EXPERIMENTS if not EXPERIMENTS[n].needs_data_root])
def test_every_declared_run_config_is_valid(name: str) -> None:
    runs = plan(get_experiment(name))
    assert len(runs) == len(get_experiment(name).variants) * len(get_experiment(name).seeds)
    for run in runs:
        RunConfig.from_dict(run.config)  # raises on any unknown key or bad component
        assert run.config["training"]["steps"] == get_experiment(name).steps


def test_plan_scales_steps_sets_seeds_and_needs_a_data_root() -> None:
    experiment = get_experiment("reponet")
    with pytest.raises(ValueError, match="data_root"):
        plan(experiment)
    runs = plan(experiment, seeds=[3, 4], steps_scale=0.1, data_root="/data")
    assert {r.seed for r in runs} == {3, 4}
    assert {r.config["training"]["steps"] for r in runs} == {300}
    assert {r.config["data"]["root"] for r in runs} == {"/data"}
    with pytest.raises(ValueError, match="steps_scale"):
        plan(experiment, steps_scale=0, data_root="/data")
    only = plan(experiment, data_root="/data", variants=["cube, m=φ"])
    assert [r.variant for r in only] == ["cube, m=φ"]
    assert only[0].config["objective"]["options"] == {"scale": 30.0, "margin": "auto"}
    with pytest.raises(ValueError, match="no variant"):
        plan(experiment, data_root="/data", variants=["dodecahedron"])


def test_unknown_experiment_is_a_clear_error(store: RunStore, capsys) -> None:
    assert main(["reproduce", "no-such-thing", "--local"]) == 2
    assert "sec-ablation" in capsys.readouterr().err
    assert main(["report", "--only", "no-such-thing"]) == 2


def _report(home: Path, out: Path, name: str) -> str:
    """Render in a new process: the report depends on nothing but the store."""
    env = {**os.environ, "SPHERESCOPE_HOME": str(home)}
    command = [sys.executable, "-m", "worker.cli", "report", "--only", name, "--out", str(out)]
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    return out.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in EXPERIMENTS if not EXPERIMENTS[n].needs_gpu])
def test_tiny_experiment_runs_and_reports_every_table(
    name: str, store: RunStore, tmp_path: Path
) -> None:
    experiment = get_experiment(name)
    sweep_id, run_ids = reproduce(
        name,
        seeds=[0],
        steps_scale=TINY_STEPS / experiment.steps,
        data_root=str(tmp_path),
        overrides=_tiny_overrides(name),
        store=store,
    )
    assert len(run_ids) == len(experiment.variants)
    assert {store.get_run(r).status for r in run_ids} == {"finished"}
    assert {store.get_run(r).sweep_id for r in run_ids} == {sweep_id}

    text = _report(store.home, tmp_path / "report.md", name)
    assert "Not run yet" not in text and "Incomplete" not in text
    assert f"steps {TINY_STEPS}; seeds 0;" in text
    assert f"`spherescope reproduce {name} --local --seeds 0 --steps-scale " in text
    for override in _tiny_overrides(name):  # the command names what differs from the plan
        assert f"--set {override}" in text
    for variant in experiment.variants:
        row = re.search(rf"^\| {re.escape(variant.name)} \| 1 \|(.*)$", text, re.MULTILINE)
        assert row, f"no table row for {variant.name}"
    verdicts = re.findall(r"^- \*\*([a-z ]+)\*\* — ", text, re.MULTILINE)
    assert len(verdicts) == len(experiment.claims)
    assert set(verdicts) <= {"inconclusive", "not measured"}  # one seed a side tells nothing
    assert "Findings" in text  # what the runs' logged geometry means (worker.findings_summary)
    figures = tmp_path / "report"
    if "loss_pairs" in experiment.analyses:
        assert re.search(r"\*\*r = -?\d\.\d\d, n = 5\*\*", text)
        assert (figures / "sec_losses_gain_vs_drop.png").stat().st_size > 1000
    if "polytope" in experiment.analyses:
        assert len(list(figures.glob("reponet_*.png"))) == 6  # every fixed head


def test_report_of_an_empty_store_says_what_to_run(store: RunStore, tmp_path: Path) -> None:
    out = tmp_path / "empty.md"
    assert main(["report", "--only", "sec-bn-wn", "--out", str(out)]) == 0
    text = out.read_text()
    assert "**Not run yet: `spherescope reproduce sec-bn-wn --local` (or `--launch`).**" in text


def test_report_uses_untagged_runs_with_a_variants_config_and_one_seed_is_inconclusive(
    store: RunStore, tmp_path: Path
) -> None:
    """A preset run launched from the form untagged was left out, and
    a claim printed "agrees" on one seed a side."""
    from sphere_engine.experiments import EXPERIMENT_TAG, VARIANT_TAG
    from worker.report import build_report

    experiment = get_experiment("isotropic")
    ids = []
    for variant, accuracy, tagged in (("softmax", 0.9, True), ("softmax + isotropic", 0.95, False)):
        config = experiment.config(experiment.variant(variant), 0, 4)
        tags = [EXPERIMENT_TAG + experiment.name, VARIANT_TAG + variant] if tagged else []
        run_id = store.create_run(RunConfig.from_dict(config).to_dict(), variant, tags=tags)
        store.set_status(run_id, "running")
        with store.tracker(run_id, flush_interval=0) as tracker:
            tracker.track_many({"norm/var": 1.0}, 4)
            tracker.track_eval({"classifier_accuracy": accuracy, "nmi": accuracy}, 4)
        store.set_status(run_id, "finished")
        ids.append(run_id)
    text = build_report(store, tmp_path / "r.md", "report", ["isotropic"])
    assert f"`{ids[1]}` (softmax + isotropic, seed 0, config matches)" in text
    assert f"`{ids[0]}` (softmax, seed 0, tagged)" in text
    verdicts = re.findall(r"^- \*\*([a-z ]+)\*\* — (.*)$", text, re.MULTILINE)
    assert verdicts and {v for v, _ in verdicts} == {"inconclusive"}
    assert all("(n = 1)" in detail and "one seed a side" in detail for _, detail in verdicts)
