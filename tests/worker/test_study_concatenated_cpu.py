"""The concatenated evaluation's CPU seconds, kept beside its metrics, include its import
(torch's, in a coordinator: most of its cost); the study bench counts them as study work
apart from the coordination."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dear_import import DEAR_IMPORT_S, make_import_dear

from db.store import RunStore
from worker.study import concatenated

NAME = "sphere_engine.evaluation.concatenated"


def test_its_cpu_seconds_include_its_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RunStore(tmp_path)
    run_ids = []
    for fold in range(2):
        run_id = store.create_run({"seed": fold})
        store.update_run_info(run_id, {"test_embeddings": f"fold{fold}.npz"})
        run_ids.append(run_id)
    make_import_dear(
        monkeypatch, NAME, concatenated_metrics=lambda paths, **options: {"map@r": 0.5}
    )
    metrics = concatenated.compute_and_store(tmp_path, "s", "arm", 0, run_ids, store)
    assert metrics == {"map@r": 0.5}
    kept = json.loads(concatenated.result_path(tmp_path, "s", "arm", 0).read_text())
    assert kept["cpu_s"] >= DEAR_IMPORT_S
