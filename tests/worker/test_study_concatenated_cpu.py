"""The concatenated evaluation's CPU seconds, kept beside its metrics, include its import
(torch's, in a coordinator: most of its cost); the study bench counts them as study work
apart from the coordination."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import sys
import time
from pathlib import Path

import pytest

from db.store import RunStore
from worker.study import concatenated

NAME = "sphere_engine.evaluation.concatenated"


class DearImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``NAME`` as a module whose import takes 0.2 s of CPU."""

    def find_spec(self, fullname, path, target=None):
        return importlib.machinery.ModuleSpec(fullname, self) if fullname == NAME else None

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        started = time.process_time()
        while time.process_time() - started < 0.2:
            pass
        module.concatenated_metrics = lambda paths, **options: {"map@r": 0.5}


def test_its_cpu_seconds_include_its_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RunStore(tmp_path)
    run_ids = []
    for fold in range(2):
        run_id = store.create_run({"seed": fold})
        store.update_run_info(run_id, {"test_embeddings": f"fold{fold}.npz"})
        run_ids.append(run_id)
    monkeypatch.delitem(sys.modules, NAME, raising=False)
    monkeypatch.setattr(sys, "meta_path", [DearImport(), *sys.meta_path])
    metrics = concatenated.compute_and_store(tmp_path, "s", "arm", 0, run_ids, store)
    assert metrics == {"map@r": 0.5}
    kept = json.loads(concatenated.result_path(tmp_path, "s", "arm", 0).read_text())
    assert kept["cpu_s"] >= 0.2
