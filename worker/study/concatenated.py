"""MLRC's *concatenated* test evaluation of a reproduction: the k fold models' test
embeddings joined (``sphere_engine.evaluation.concatenated``), computed once when a
reproduction's folds have all finished, and kept in the study's folder
(``concatenated/<arm>-<repro>.json``) so the dashboard reads it without torch.

The coordinator hands it to its launcher (``launcher.py``): a Celery worker computes it
(torch is imported there already; imported in the coordinator it was most of the
coordinator's CPU), a SLURM study computes it in the coordinator. Either way the file
is written once it ended, with the metrics or the error, so the coordinator waits for
the file alone."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from db.atomic import read_json, write_json_atomic
from db.store import RunStore
from worker.study import storage

log = logging.getLogger(__name__)


def result_path(home: str | os.PathLike[str], study_id: str, arm: str, repro: int) -> Path:
    return storage.study_dir(home, study_id) / "concatenated" / f"{arm}-{repro}.json"


def stored(
    home: str | os.PathLike[str], study_id: str, arm: str, repro: int
) -> dict[str, float] | None:
    """Its metrics; None before it ended or when it failed."""
    data = read_json(result_path(home, study_id, arm, repro))
    metrics = None if data is None else data.get("metrics")
    return None if metrics is None else {k: float(v) for k, v in metrics.items()}


def compute_and_store(
    home: str | os.PathLike[str], study_id: str, arm: str, repro: int, run_ids: list[str],
    store: RunStore,
) -> dict[str, float]:  # fmt: skip
    """Evaluate the joined embeddings of ``run_ids`` (fold order) and keep the result."""
    import time

    # timed from before the import: torch's import (most of its cost where it is not
    # imported yet) is study work too
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
    # its CPU in the process that computed it (its pid says which)
    cpu_s = round(time.process_time() - started, 3)
    write_json_atomic(
        path, {"runs": run_ids, "metrics": metrics, "cpu_s": cpu_s, "pid": os.getpid()}
    )
    return metrics


def evaluate_and_keep(
    home: str | os.PathLike[str], study_id: str, arm: str, repro: int, run_ids: list[str],
    store: RunStore,
) -> None:  # fmt: skip
    """``compute_and_store``, or its error kept in the metrics' place: the file says
    it ended either way (the coordinator waits for it)."""
    try:
        compute_and_store(home, study_id, arm, repro, run_ids, store)
    except (ValueError, OSError) as error:
        log.warning("study %s: %s reproduction %d not concatenated: %s",
                    study_id, arm, repro, error)  # fmt: skip
        path = result_path(home, study_id, arm, repro)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, {"runs": run_ids, "error": str(error)})


def ended(home: str | os.PathLike[str], study_id: str, arm: str, repro: int) -> bool:
    """Whether its file is there (metrics or error): a stat, not a read."""
    return result_path(home, study_id, arm, repro).is_file()


def forget_failure(home: str | os.PathLike[str], study_id: str, arm: str, repro: int) -> None:
    """A failed evaluation's file removed before it is tried again (a coordinator started
    again tries once more, as it always did)."""
    result_path(home, study_id, arm, repro).unlink(missing_ok=True)
