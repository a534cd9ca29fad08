"""`spherescope train` and `spherescope analyze` record into the run store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import sphere_engine.train
from db import layout, queries
from db.query_results import per_class_results, query_results
from db.schema import TABLES
from db.store import RunStore
from sphere_engine.errors import TrainingDivergedError
from sphere_engine.training import load_checkpoint
from worker.cli import main
from worker.execution import execute_run
from worker.reaper import reap_lost

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """
[data]
name = "digits"
batch_size = 20
samples_per_class = 4
[model]
name = "mlp"
embedding_dim = 16
[objective]
kind = "loss"
name = "triplet"
[regularizer]
name = "sec"
weight = 0.5
[training]
steps = 12
[diagnostics]
eval_every = 6
eval_max_samples = 300
"""


@pytest.fixture
def store(tmp_path, monkeypatch) -> RunStore:
    monkeypatch.setenv("SPHERESCOPE_HOME", str(tmp_path / "home"))
    return RunStore()


def test_train_records_a_finished_run(tmp_path, store, capsys) -> None:
    path = tmp_path / "sec.toml"
    path.write_text(CONFIG)
    assert main(["train", str(path), "--set", "training.steps=10"]) == 0
    printed = capsys.readouterr().out
    assert "recall@1" in printed and "norm/var" in printed
    runs = queries.list_runs(store)
    assert list(runs["status"]) == ["finished"] and list(runs["name"]) == ["sec"]
    run_id = runs["run_id"][0]
    assert runs["config"][0]["training"]["steps"] == 10
    series = queries.metric_series(store, [run_id], ["loss/sec"], max_points=100)
    assert sorted(series["step"]) == list(range(1, 11))
    assert set(queries.eval_series(store, [run_id])["step"]) == {6, 10}
    assert queries.snapshot_steps(store, run_id) == [6, 10]
    checkpoints = queries.checkpoints(store, run_id)
    assert len(checkpoints) >= 1
    # the run's own checkpoint directory is not written into its config: the recorded
    # config and the checkpoint's are the one that was validated
    saved = load_checkpoint(checkpoints["path"].iloc[-1])["config"]
    assert saved == runs["config"][0] and saved["training"]["checkpoint_dir"] == ""


def test_bad_config_is_rejected_and_nothing_recorded(tmp_path, store, capsys) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(CONFIG)
    assert main(["train", str(path), "--set", "regularizer.weight=-1"]) == 2
    assert "regularizer.weight: -1.0 is below the minimum 0.0" in capsys.readouterr().err
    assert queries.list_runs(store).empty


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("optimizer.lr=nan", "optimizer.lr: nan is not a finite number"),
        ("optimizer.lr=inf", "optimizer.lr: inf is not a finite number"),
        ("regularizer.weight=nan", "regularizer.weight: nan is not a finite number"),
        ("optimizer.momentum=nan", "optimizer.momentum: nan is not a finite number"),
        ("regularizer.options.momentum=nan", "regularizer.options.momentum: nan is not a finite"),
        ("data.root=/nonexistent", "data.root: MNIST files not found in '/nonexistent/MNIST/raw'"),
    ],
)
def test_non_finite_values_and_a_missing_root_are_one_line_errors(
    tmp_path, store, capsys, override, message
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(CONFIG)
    mnist = ["--set", "data.name=mnist", "--set", "data.split=standard"]
    assert main(["train", str(path), *mnist, "--set", override]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err
    assert queries.list_runs(store).empty and not list(store.runs_dir.iterdir())


def test_the_spherescope_command_refuses_nan_with_exit_code_2(tmp_path, store) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(CONFIG)
    result = subprocess.run(
        [sys.executable, "-m", "worker.cli", "train", str(path), "--set", "optimizer.lr=nan"],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr == "error: optimizer.lr: nan is not a finite number\n"
    assert queries.list_runs(store).empty


def test_diverging_run_is_recorded_as_failed(tmp_path, store, capsys) -> None:
    path = tmp_path / "diverge.toml"
    path.write_text(
        CONFIG.replace('kind = "loss"\nname = "triplet"', 'kind = "head"\nname = "linear"')
        + '[optimizer]\nname = "sgd"\nlr = 1e8\nmomentum = 0.0\n'
    )
    assert (
        main(["train", str(path), "--set", "data.split=standard", "--set", "training.steps=60"])
        == 1
    )
    run = queries.list_runs(store).iloc[0]
    assert run["status"] == "failed"
    assert "training diverged: the loss became" in run["status_message"]


def _refuse(token: str):
    raise ValueError(f"metrics JSON holds the non-JSON token {token}")


def test_analyze_prints_writes_and_records(tmp_path, store, capsys) -> None:
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 25)
    embeddings = rng.normal(size=(100, 8)) + 4 * np.eye(8)[labels]
    np.savez(tmp_path / "emb.npz", embeddings=embeddings, labels=labels)
    out = tmp_path / "report.json"
    assert main(["analyze", str(tmp_path / "emb.npz"), "--out", str(out)]) == 0
    metrics = json.loads(out.read_text(), parse_constant=_refuse)  # strict: no NaN token
    assert metrics["recall@1"] == pytest.approx(1.0)
    # 100 samples give 3,750 impostor pairs: TAR@FAR 1e-3 (10,000 needed) is null, said why
    assert metrics["verification/tar@far=1e-3"] is None
    assert (
        "verification/tar@far=1e-3: null (3,750 impostor pairs; this FAR needs 10,000)"
        in (metrics["notes"])
    )
    assert "recall@1" in capsys.readouterr().out
    runs = queries.list_runs(store, kind="analysis")
    assert len(runs) == 1 and runs["status"][0] == "finished"
    run_id = runs["run_id"][0]
    recorded = queries.eval_series(store, [run_id])
    assert dict(zip(recorded["name"], recorded["value"], strict=True))["recall@1"] == 1.0
    assert len(queries.snapshot(store, run_id, 0)) == 100
    # the explorer's per-query and per-class results, stored with step 0
    kept = query_results(store, run_id, 0)
    assert kept["query"].tolist() == list(range(100)) and kept["hit@1"].all()
    assert all(labels[row] == kept["label"][i] for i, row in enumerate(kept["query"]))
    assert per_class_results(store, run_id, 0)["recall@1"].tolist() == [1.0] * 4


def test_analyze_query_gallery_with_string_labels(tmp_path, store, capsys) -> None:
    rng = np.random.default_rng(0)
    names = np.array(["ant", "bee", "cat", "dog"])
    centres = 5 * np.eye(8)[:4]

    def save(path: Path, classes: np.ndarray) -> None:
        points = centres[classes] + 0.1 * rng.normal(size=(len(classes), 8))
        np.savez(path, embeddings=points, labels=names[classes])

    save(tmp_path / "q.npz", np.array([1, 2, 3] * 5))  # the query file lacks "ant": other ids
    save(tmp_path / "g.npz", np.arange(40) % 4)
    out = tmp_path / "qg.json"
    argv = ["analyze", "--query", str(tmp_path / "q.npz"), "--gallery", str(tmp_path / "g.npz")]
    assert main([*argv, "--ks", "1,10", "--out", str(out)]) == 0
    metrics = json.loads(out.read_text(), parse_constant=_refuse)
    # names matched across files: every query finds its class in the gallery
    assert metrics["recall@1"] == 1.0 and metrics["recall@10"] == 1.0
    assert metrics["retrieval/queries"] == 15 and "recall@2" not in metrics
    assert metrics["verification/auc"] == pytest.approx(1.0)
    run_id = queries.list_runs(store, kind="analysis")["run_id"][0]
    assert store.get_run(run_id).config["analysis"]["protocol"] == "query_gallery"
    roc = queries.latest_curves(store, [run_id], "verification/roc")
    assert len(roc) > 0 and roc["x"].iloc[-1] == 1.0
    classes = per_class_results(store, run_id, 0)
    assert classes["class_name"].tolist() == ["bee", "cat", "dog"]  # the query classes
    assert query_results(store, run_id, 0)["neighbors"].map(len).eq(10).all()


def test_analyze_needs_a_file_or_a_query_and_a_gallery(tmp_path, store, capsys) -> None:
    assert main(["analyze", "--query", str(tmp_path / "q.npz")]) == 2
    assert "give either FILE, or both --query and --gallery" in capsys.readouterr().err
    assert queries.list_runs(store).empty


def test_analyze_memory_maps_npy_and_takes_the_knn_backend(tmp_path, store, capsys) -> None:
    labels = np.repeat(np.arange(4), 25)
    embeddings = np.random.default_rng(1).normal(size=(100, 8)) + 4 * np.eye(8)[labels]
    np.save(tmp_path / "emb.npy", embeddings.astype(np.float32))
    np.save(tmp_path / "emb_labels.npy", labels)
    argv = ["analyze", str(tmp_path / "emb.npy"), "--out", str(tmp_path / "m.json")]
    assert main([*argv, "--knn-backend", "cuda"]) == 2
    assert "knn backend must be one of" in capsys.readouterr().err
    assert queries.list_runs(store).empty
    assert main([*argv, "--knn-backend", "torch"]) == 0
    assert json.loads((tmp_path / "m.json").read_text(), parse_constant=_refuse)[
        "recall@1"
    ] == pytest.approx(1.0)


def test_analyze_missing_file_is_a_clear_error(tmp_path, store, capsys) -> None:
    assert main(["analyze", str(tmp_path / "nope.npz")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert queries.list_runs(store).empty


def _chunk_files(store: RunStore, run_id: str) -> list[str]:
    return [
        path.name
        for table in TABLES
        for path in layout.scan_table(store.table_dir(run_id, table)).live
        if layout.CHUNK_PATTERN.match(path.name)
    ]


def test_analysis_and_training_runs_are_compacted_when_they_end(tmp_path, store) -> None:
    np.savez(
        tmp_path / "emb.npz", embeddings=np.eye(8)[np.arange(40) % 8], labels=np.arange(40) % 4
    )
    assert main(["analyze", str(tmp_path / "emb.npz")]) == 0
    path = tmp_path / "sec.toml"
    path.write_text(CONFIG)
    assert main(["train", str(path), "--set", "training.steps=6"]) == 0
    runs = store.list_runs()
    assert sorted(r.kind for r in runs) == ["analysis", "train"]
    for run in runs:
        assert _chunk_files(store, run.run_id) == [], run.kind
        assert len(store.live_files("evals", [run.run_id])) == 1


DIVERGING = CONFIG.replace('kind = "loss"\nname = "triplet"', 'kind = "head"\nname = "linear"') + (
    '[optimizer]\nname = "sgd"\nlr = 1e8\nmomentum = 0.0\n'
)


def _same_config_through_the_worker(store: RunStore, cli_run_id: str) -> str:
    """A queued run of the CLI run's config, as ``worker.launch`` records it."""
    return store.create_run(store.get_run(cli_run_id).config)


def test_cli_and_worker_record_a_divergence_the_same_way(tmp_path, store) -> None:
    path = tmp_path / "diverge.toml"
    path.write_text(DIVERGING)
    assert main(["train", str(path), "--set", "data.split=standard"]) == 1
    (cli_run,) = store.list_runs()
    worker_run_id = _same_config_through_the_worker(store, cli_run.run_id)

    with pytest.raises(TrainingDivergedError):
        execute_run(store, worker_run_id)

    worker_run = store.get_run(worker_run_id)
    assert (worker_run.status, worker_run.status_message) == (
        cli_run.status,
        cli_run.status_message,
    )
    assert cli_run.status == "failed" and "training diverged" in cli_run.status_message


def test_cli_and_worker_record_a_crash_the_same_way(tmp_path, store, monkeypatch) -> None:
    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom at step 3")

    monkeypatch.setattr(sphere_engine.train, "run_training", crash)
    path = tmp_path / "sec.toml"
    path.write_text(CONFIG)
    with pytest.raises(RuntimeError, match="boom"):
        main(["train", str(path)])
    (cli_run,) = store.list_runs()
    worker_run_id = _same_config_through_the_worker(store, cli_run.run_id)
    with pytest.raises(RuntimeError, match="boom"):
        execute_run(store, worker_run_id)

    worker_run = store.get_run(worker_run_id)
    expected = ("failed", "RuntimeError: boom at step 3")
    assert (cli_run.status, cli_run.status_message) == expected
    assert (worker_run.status, worker_run.status_message) == expected


# Evaluations made slow on purpose, longer than the lost-run limit, in a real CLI process:
# the part on the loop's thread (embedding the test split), so that no step advances
SLOW_EVALUATION = """
import sys, time
from sphere_engine import evaluation
real = evaluation.Evaluator.capture

def slow(self, *args, **kwargs):
    time.sleep(float(sys.argv[2]))
    return real(self, *args, **kwargs)

evaluation.Evaluator.capture = slow
from worker.cli import main
sys.exit(main(["train", sys.argv[1]]))
"""


def test_a_cli_run_in_a_long_evaluation_is_never_marked_lost(tmp_path, store, monkeypatch):
    path = tmp_path / "sec.toml"
    path.write_text(CONFIG)
    lost_after, evaluation_s = 2.5, 6.0  # margins for a loaded machine: beats every 0.2 s
    monkeypatch.setenv("SPHERESCOPE_LOST_AFTER_S", str(lost_after))  # for reap_lost here
    env = {**os.environ, "SPHERESCOPE_HEARTBEAT_S": "0.2"}
    command = [sys.executable, "-c", SLOW_EVALUATION, str(path), str(evaluation_s)]
    process = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    reaped: list[str] = []
    longest_gap, last_progress = 0.0, (None, time.monotonic())
    try:
        while process.poll() is None:  # `spherescope status` run again and again
            reaped += reap_lost(store)
            for run in store.list_runs():
                if run.progress_step != last_progress[0]:
                    last_progress = (run.progress_step, time.monotonic())
            longest_gap = max(longest_gap, time.monotonic() - last_progress[1])
            time.sleep(0.1)
    finally:
        process.kill()
        _, stderr = process.communicate()
    assert process.returncode == 0, stderr
    (run,) = store.list_runs()
    assert reaped == [], run.status_message
    assert (run.status, run.progress_step) == ("finished", 12)
    assert longest_gap > 2 * lost_after  # the evaluations really outlasted the limit
