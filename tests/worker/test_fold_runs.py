"""A fold run recorded through `spherescope train` and the worker's path: what the store
says it trained, validated and tested on, its early stop and its test embeddings."""

from __future__ import annotations

import re

import numpy as np
import pytest

from db import queries
from db.store import RunStore
from sphere_engine.config.folds import expand_class_ranges
from worker.cli import main

CONFIG = """
[data]
name = "digits"
batch_size = 12
samples_per_class = 4
folds = 2
fold = 1
[model]
name = "mlp"
embedding_dim = 16
[optimizer]
name = "rmsprop"
lr = 0.0
[training]
steps = 200
early_stop_patience = 2
[diagnostics]
eval_every = 4
eval_max_samples = 200
[evaluation]
final_test = true
verification = false
"""


@pytest.fixture
def store(tmp_path, monkeypatch) -> RunStore:
    monkeypatch.setenv("SPHERESCOPE_HOME", str(tmp_path / "home"))
    return RunStore()


def test_a_recorded_fold_run_stops_early_tests_once_and_says_what_it_saw(tmp_path, store, capsys):
    path = tmp_path / "fold.toml"
    path.write_text(CONFIG)
    assert main(["train", str(path)]) == 0
    (run,) = store.list_runs()
    assert run.status_message in capsys.readouterr().err.splitlines()  # told, not only stored
    # lr 0: no validation evaluation improves on the first (step 4); the second miss is
    # known at step 12, or a few steps later when the evaluation finishes in the background
    assert run.status == "finished"
    stopped = re.match(
        r"stopped early at step (\d+): no improvement of map@r in (\d+) evaluations \(best "
        r"[0-9.]+ at step 4\)$",
        run.status_message,
    )
    assert stopped, run.status_message
    last, misses = int(stopped.group(1)), int(stopped.group(2))
    assert last >= 12 and misses >= 2 and queries.last_step(store, run.run_id) == last

    classes = run.run_info["data_classes"]
    assert classes == {"train": [[2, 4]], "validation": [[0, 1]], "test": [[5, 9]]}
    validation = set(expand_class_ranges(classes["validation"]))
    for step in queries.snapshot_steps(store, run.run_id):
        assert set(queries.snapshot(store, run.run_id, step)["label"]) <= validation

    evals = queries.eval_series(store, run.run_id)
    tested = evals[evals["name"].str.startswith("test/")]
    assert set(tested["step"]) == {last} and run.run_info["final_test_step"] == last
    assert set(evals[evals["name"] == "map@r"]["step"]) - {last} == set(range(4, last, 4))

    npz = store.checkpoint_dir(run.run_id) / "test_embeddings.npz"
    assert run.run_info["test_embeddings"] == str(npz.resolve())
    saved = np.load(npz)
    assert set(saved["labels"].tolist()) == {5, 6, 7, 8, 9}
    final = queries.final_metrics(store, run.run_id, ["test/map@r"])
    assert final["test/map@r"][0] == pytest.approx(
        tested[tested["name"] == "test/map@r"]["value"].item()
    )
