"""MLRC's *concatenated* test evaluation of a reproduction: the k fold models' test
embeddings joined (``sphere_engine.evaluation.concatenated``), computed once by the
coordinator when a reproduction's folds have all finished, and kept in the study's
folder (``concatenated/<arm>-<repro>.json``) so the dashboard reads it without torch."""

from __future__ import annotations

import os
from pathlib import Path

from db.atomic import read_json, write_json_atomic
from db.store import RunStore
from worker.study import storage


def result_path(home: str | os.PathLike[str], study_id: str, arm: str, repro: int) -> Path:
    return storage.study_dir(home, study_id) / "concatenated" / f"{arm}-{repro}.json"


def stored(
    home: str | os.PathLike[str], study_id: str, arm: str, repro: int
) -> dict[str, float] | None:
    data = read_json(result_path(home, study_id, arm, repro))
    return None if data is None else {k: float(v) for k, v in data["metrics"].items()}


def compute_and_store(
    home: str | os.PathLike[str], study_id: str, arm: str, repro: int, run_ids: list[str],
    store: RunStore,
) -> dict[str, float]:  # fmt: skip
    """Evaluate the joined embeddings of ``run_ids`` (fold order) and keep the result."""
    import time

    # timed from before the import: torch's import (most of its cost) is study work too
    started = time.process_time()
    from sphere_engine.evaluation.concatenated import concatenated_metrics

    records = [store.get_run(run_id) for run_id in run_ids]
    paths = []
    for record in records:
        path = record.run_info.get("test_embeddings")
        if not path:
            raise ValueError(f"run {record.run_id} saved no test embeddings")
        paths.append(path)
    config = records[0].config
    metrics = concatenated_metrics(
        paths,
        protocol=config.get("evaluation", {}).get("retrieval_protocol", "leave_one_out"),
        recall_ks=config.get("diagnostics", {}).get("recall_ks", (1, 2, 4, 8)),
    )
    path = result_path(home, study_id, arm, repro)
    path.parent.mkdir(parents=True, exist_ok=True)
    # its CPU (this process's, torch's import included): study work, not coordination
    cpu_s = round(time.process_time() - started, 3)
    write_json_atomic(path, {"runs": run_ids, "metrics": metrics, "cpu_s": cpu_s})
    return metrics
