"""Findings on real short runs trained by `spherescope train`: stored with the run,
printed in its summary and in `--json`."""

from __future__ import annotations

import json

import pytest

from db import queries
from db.findings import run_findings, stored_findings
from db.store import RunStore
from worker.cli import main

BASE = """
[data]
name = "digits"
batch_size = 20
samples_per_class = 4
[model]
name = "mlp"
embedding_dim = 16
[diagnostics]
eval_every = 1000
eval_max_samples = 200
tracked_samples = 4
"""


@pytest.fixture
def store(tmp_path, monkeypatch) -> RunStore:
    monkeypatch.setenv("SPHERESCOPE_HOME", str(tmp_path / "home"))
    return RunStore()


def train_json(tmp_path, capsys, sections: str, *overrides: str) -> tuple[int, dict]:
    path = tmp_path / "run.toml"
    path.write_text(BASE + sections)
    sets = [item for override in overrides for item in ("--set", override)]
    code = main(["train", str(path), "--json", *sets])
    return code, json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def names(report: dict) -> list[str]:
    return [finding["name"] for finding in report["findings"]]


@pytest.mark.slow
def test_a_run_whose_norms_explode_finishes_with_a_diverged_finding(
    tmp_path, store, capsys
) -> None:
    # lr = 1e9: the scale-invariant loss stays finite while the norms reach ~1e27
    sections = '[objective]\nkind = "loss"\nname = "triplet"\n'
    sections += '[optimizer]\nname = "sgd"\nlr = 1e9\n[training]\nsteps = 20\n'
    code, report = train_json(tmp_path, capsys, sections)
    assert code == 0 and report["status"] == "finished"
    assert names(report)[0] == "diverged"
    # absolute values, and where they were first logged: past 1e20 one step after it
    message = report["findings"][0]["message"]
    assert (
        message.startswith("mean norm grew from 0.") and "step 1, the first logged step" in message
    )
    assert "e+2" in message.split("by step 2;")[0]
    # stored with the run: the dashboard reads the same list
    record = queries.get_run(store, report["run_id"])
    assert [d.name for d in stored_findings(record.run_info)] == names(report)
    assert [d.name for d in run_findings(store, report["run_id"])] == names(report)


@pytest.mark.slow
def test_a_run_with_a_nan_loss_fails_with_the_step_in_its_finding(tmp_path, store, capsys) -> None:
    sections = '[objective]\nkind = "head"\nname = "linear"\n'
    sections += '[optimizer]\nname = "sgd"\nlr = 1e8\nmomentum = 0.0\n[training]\nsteps = 60\n'
    code, report = train_json(tmp_path, capsys, sections, "data.split=standard")
    assert code == 1 and "diverged" in report["error"]
    diverged = report["findings"][0]
    assert diverged["name"] == "diverged" and "non-finite at step" in diverged["message"]


@pytest.mark.slow
def test_a_semihard_run_without_margin_has_a_dead_loss(tmp_path, store, capsys) -> None:
    # no semi-hard negative can violate a zero margin: no active triplet, loss 0
    sections = '[objective]\nkind = "loss"\nname = "semihard_triplet"\noptions = {margin = 0.0}\n'
    sections += '[optimizer]\nname = "sgd"\nlr = 1.0\n[training]\nsteps = 30\n'
    code, report = train_json(tmp_path, capsys, sections)
    assert code == 0
    assert "dead_loss" in names(report) and "diverged" not in names(report)
    series = queries.metric_series(store, [report["run_id"]], ["mining/active_fraction"])
    assert len(series) == 30 and (series["value"] == 0).mean() > 0.8


@pytest.mark.slow
def test_a_healthy_sec_run_has_no_finding_and_says_so(tmp_path, store, capsys) -> None:
    sections = '[objective]\nkind = "loss"\nname = "triplet"\n'
    sections += '[regularizer]\nname = "sec"\nweight = 0.5\n[training]\nsteps = 20\n'
    path = tmp_path / "healthy.toml"
    path.write_text(BASE + sections)
    assert main(["train", str(path)]) == 0
    assert "findings: none" in capsys.readouterr().out
    run_id = queries.list_runs(store)["run_id"][0]
    assert stored_findings(queries.get_run(store, run_id).run_info) == []


def test_the_report_lists_each_runs_findings(store) -> None:
    from db.lifecycle import RunLifecycle
    from worker.findings_summary import findings_markdown

    run_ids = []
    for name, growth in (("exploding", 10.0), ("steady", 1.0)):
        run_id = store.create_run({}, name, kind="train")
        with RunLifecycle(store, run_id, heartbeat_s=60) as run:
            for step in range(1, 21):
                run.tracker.track_many({"loss/total": 0.1, "norm/mean": growth**step}, step)
        run_ids.append(run_id)
    text = findings_markdown(
        store, zip(run_ids, ["exploding seed 0", "steady seed 0"], strict=True)
    )
    assert text.startswith("Findings on these runs:")
    assert "- `exploding seed 0` — **Training diverged** (critical): mean norm grew" in text
    assert "steady" not in text
    assert findings_markdown(store, [(run_ids[1], "steady")]).startswith("Findings: none")


@pytest.mark.slow
def test_a_triplet_run_at_a_high_lr_collapses_with_unbalanced_updates(
    tmp_path, store, capsys
) -> None:
    # no SEC, plain SGD at lr 0.5: the test embeddings gather in one point
    sections = '[objective]\nkind = "loss"\nname = "triplet"\n'
    sections += '[optimizer]\nname = "sgd"\nlr = 0.5\n[training]\nsteps = 40\n'
    code, report = train_json(tmp_path, capsys, sections, "diagnostics.tracked_samples=0")
    assert code == 0
    assert {"collapse", "unbalanced_directions"} <= set(names(report)), report["findings"]


@pytest.mark.slow
def test_a_frozen_fixed_head_run_stays_off_its_vertices_with_a_flat_evaluation(
    tmp_path, store, capsys
) -> None:
    # lr = 0: nothing moves, so the centroids stay where they started and R@1 is flat
    sections = '[objective]\nkind = "head"\nname = "simplex"\n'
    sections += '[optimizer]\nname = "sgd"\nlr = 0.0\n[training]\nsteps = 30\n'
    overrides = (
        "data.split=standard",
        "diagnostics.eval_every=5",
        "diagnostics.eval_max_samples=150",
    )
    code, report = train_json(tmp_path, capsys, sections, *overrides)
    assert code == 0
    assert {"centroids_off_vertices", "flat_evaluation"} <= set(names(report)), report


@pytest.mark.slow
def test_an_l2_norm_penalty_shrinks_the_norms_towards_eps(tmp_path, store, capsys) -> None:
    # the μ = 0 regulariser, strong: it scales the batch-normalised embeddings (norm ~4)
    # down past 1e-2 within 30 steps, while the loss, blind to the scale, cannot hold them
    sections = '[objective]\nkind = "loss"\nname = "triplet"\n'
    sections += '[regularizer]\nname = "l2"\nweight = 500.0\n'
    sections += '[optimizer]\nname = "sgd"\nlr = 0.001\nmomentum = 0.0\n[training]\nsteps = 30\n'
    code, report = train_json(tmp_path, capsys, sections, "model.embedding_bn=true")
    assert code == 0
    assert "norms_shrinking" in names(report), report["findings"]
    shrinking = next(f for f in report["findings"] if f["name"] == "norms_shrinking")
    assert shrinking["message"].startswith("mean norm fell from")
    stored = stored_findings(queries.get_run(store, report["run_id"]).run_info)
    assert "norms_shrinking" in [d.name for d in stored]


@pytest.mark.slow
def test_a_long_fast_triplet_run_overfits_its_training_classes(tmp_path, store, capsys) -> None:
    # Adam at lr 1e-2 on digits' classes 0-4: Recall@1 on the unseen classes 5-9 peaks
    # at the first evaluation and falls while the training loss keeps falling
    sections = '[objective]\nkind = "loss"\nname = "triplet"\n'
    sections += '[optimizer]\nname = "adam"\nlr = 0.01\n[training]\nsteps = 100\n'
    code, report = train_json(tmp_path, capsys, sections, "diagnostics.eval_every=10")
    assert code == 0
    assert "overfitting" in names(report), report["findings"]
    overfitting = next(f for f in report["findings"] if f["name"] == "overfitting")
    assert "recall@1 fell from" in overfitting["message"]
    stored = stored_findings(queries.get_run(store, report["run_id"]).run_info)
    assert "overfitting" in [d.name for d in stored]
    # the same run, as the explorer and the Mining tab read it: the CLI's progress bar
    # sits beside the store, and per-query results, thumbnails and the pair-cosine
    # histograms reach the store through it
    from db.query_results import evaluation_steps
    from db.thumbnails import has_thumbnails

    assert evaluation_steps(store, report["run_id"]) == list(range(10, 101, 10))
    assert has_thumbnails(store, report["run_id"])
    logged = queries.metric_names(store, report["run_id"])
    assert any(n.startswith("mining/pos_sim_hist/") for n in logged)
    assert any(n.startswith("mining/neg_sim_hist/") for n in logged)
