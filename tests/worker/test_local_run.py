"""`spherescope train` and `spherescope analyze` record into the run store."""

from __future__ import annotations

import json

import numpy as np
import pytest

from db import queries
from db.store import RunStore
from worker.cli import main

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
    assert len(queries.checkpoints(store, run_id)) >= 1


def test_bad_config_is_rejected_and_nothing_recorded(tmp_path, store, capsys) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(CONFIG)
    assert main(["train", str(path), "--set", "regularizer.weight=-1"]) == 2
    assert "regularizer.weight: -1.0 is below the minimum 0.0" in capsys.readouterr().err
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


def test_analyze_prints_writes_and_records(tmp_path, store, capsys) -> None:
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 25)
    embeddings = rng.normal(size=(100, 8)) + 4 * np.eye(8)[labels]
    np.savez(tmp_path / "emb.npz", embeddings=embeddings, labels=labels)
    out = tmp_path / "report.json"
    assert main(["analyze", str(tmp_path / "emb.npz"), "--out", str(out)]) == 0
    metrics = json.loads(out.read_text())
    assert metrics["recall@1"] == pytest.approx(1.0)
    assert "recall@1" in capsys.readouterr().out
    runs = queries.list_runs(store, kind="analysis")
    assert len(runs) == 1 and runs["status"][0] == "finished"
    run_id = runs["run_id"][0]
    recorded = queries.eval_series(store, [run_id])
    assert dict(zip(recorded["name"], recorded["value"], strict=True))["recall@1"] == 1.0
    assert len(queries.snapshot(store, run_id, 0)) == 100


def test_analyze_missing_file_is_a_clear_error(tmp_path, store, capsys) -> None:
    assert main(["analyze", str(tmp_path / "nope.npz")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert queries.list_runs(store).empty
