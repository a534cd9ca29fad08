"""In-process commands of the CLI: ``spherescope train`` and ``spherescope analyze``.

Both record into the run store like any other run, so the dashboard shows them
next to runs executed by the workers, and both live through ``db.lifecycle.RunLifecycle``
like a worker's run: heartbeat thread (a long evaluation is never marked lost), cancel
flag from the dashboard, end of run with compaction, failures recorded the same way.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from db import run_log
from db.heartbeat import heartbeat_interval
from db.lifecycle import RunLifecycle
from db.query_results import store_query_results
from db.store import RunStore
from db.write_errors import StoreWriteError
from sphere_engine.catalogue import key_metrics
from sphere_engine.config import RunConfig
from sphere_engine.config.validation import validated_config
from sphere_engine.errors import TrainingDivergedError
from sphere_engine.tracking import Tracker
from worker.findings_summary import findings_json, format_findings, stored_run_findings
from worker.progress import ProgressBar
from worker.train_in_run import train_in_run

if TYPE_CHECKING:
    from sphere_engine.train import TrainingResult


def format_metrics(metrics: Mapping[str, float]) -> str:
    """A two-column text table of metrics, key metrics first."""
    ordered = [k for k in key_metrics() if k in metrics]
    ordered += sorted(k for k in metrics if k not in ordered)
    width = max((len(k) for k in ordered), default=6)
    return "\n".join(f"{name:<{width}}  {metrics[name]:.6g}" for name in ordered)


def _lifecycle(store: RunStore, run_id: str) -> RunLifecycle:
    """The CLI's runs live like a worker's: heartbeat thread, end of run, failures."""
    return RunLifecycle(store, run_id, heartbeat_s=heartbeat_interval(), accept_running=True)


def record_train_run(
    store: RunStore,
    config: RunConfig,
    name: str,
    *,
    tags: Sequence[str] = (),
    sweep_id: str | None = None,
    project: str | None = None,
) -> str:
    """Record a run this process is about to train; its id."""
    # Recorded as running at once: a queued run that no broker holds could be picked up.
    run_id = store.create_run(
        config.to_dict(), name, kind="train", tags=tags, sweep_id=sweep_id, status="running",
        project=project,
    )  # fmt: skip
    print(f"run {run_id} ({name}) recorded in {store.home}", file=sys.stderr)
    return run_id


def train_recorded(
    store: RunStore, run_id: str, config: RunConfig, progress: Tracker | None = None
) -> TrainingResult:
    """Train a validated ``config`` in this process as run ``run_id`` (recorded by
    ``record_train_run``), with the lifecycle a worker uses: heartbeat, cancel flag, end
    of run, failures recorded on the run and re-raised."""
    with _lifecycle(store, run_id) as run, run_log.capture(store.run_dir(run_id)):
        return train_in_run(run, config, progress)


def train_command(
    config_path: str,
    overrides: list[str],
    name: str | None = None,
    tags: Iterable[str] = (),
    as_json: bool = False,
    project: str | None = None,
) -> int:
    """Train in this process, recording into the store (in ``project``, default
    ``default``); returns the exit code.

    ``as_json``: the result goes to stdout as one JSON object (run id, status, steps,
    device, final metrics, findings, error); everything else goes to stderr."""
    report: dict[str, Any] = {"run_id": None, "name": name, "status": "invalid"}
    try:
        config = validated_config(RunConfig.from_toml(config_path, overrides))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return _report(as_json, {**report, "error": str(error)}, 2)
    store = RunStore()
    run_name = name or Path(config_path).stem
    try:
        run_id = record_train_run(store, config, run_name, tags=list(tags), project=project)
    except ValueError as error:  # a malformed project name
        print(f"error: {error}", file=sys.stderr)
        return _report(as_json, {**report, "error": str(error)}, 2)
    report.update(run_id=run_id, name=run_name, home=str(store.home), status="failed")
    progress = ProgressBar()
    try:
        result = train_recorded(store, run_id, config, progress)
    except KeyboardInterrupt:
        progress.close()
        print("\ncancelled", file=sys.stderr)
        return _report(as_json, {**report, "status": "cancelled"}, 130)
    except (TrainingDivergedError, ValueError, StoreWriteError, OSError) as error:
        # Recorded as the worker does; one line (a full disk names the file it was writing).
        progress.close()
        found = stored_run_findings(store, run_id)
        print(format_findings(found), file=sys.stderr)
        print(f"\nerror: {error}", file=sys.stderr)  # last: what a log's tail shows
        return _report(
            as_json, {**report, "error": str(error), "findings": findings_json(found)}, 1
        )
    progress.close()
    report.update(
        status="cancelled" if result.cancelled else "finished",
        steps=result.steps_completed,
        device=result.device,
        metrics=result.final_metrics,
        findings=findings_json(found := stored_run_findings(store, run_id)),
    )
    if result.cancelled:
        print(f"\ncancelled at step {result.steps_completed}", file=sys.stderr)
        return _report(as_json, report, 130)
    if not as_json:
        print(format_metrics(result.final_metrics))
        print(format_findings(found))
    return _report(as_json, report, 0)


def _report(as_json: bool, report: Mapping[str, Any], code: int) -> int:
    """Print ``report`` as one JSON line on stdout when asked; returns ``code``."""
    if as_json:
        print(json.dumps(_plain_json(report), sort_keys=True), flush=True)
    return code


def _plain_json(value: Any) -> Any:
    """``value`` with NaN/inf as null: standard JSON, readable by any parser."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(key): _plain_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(item) for item in value]
    return value


def analyze_command(
    path: str | None,
    out: str | None = None,
    name: str | None = None,
    *,
    query: str | None = None,
    gallery: str | None = None,
    ks: list[int] | None = None,
    knn_backend: str = "auto",
) -> int:
    """Metrics for embeddings a user already has; printed, written as JSON, recorded.
    ``path`` alone: leave-one-out retrieval; ``query`` + ``gallery`` files instead:
    the query–gallery protocol (``sphere_engine.metrics.analysis``)."""
    from sphere_engine.metrics import analysis_metrics, load_labelled_embeddings, load_query_gallery
    from sphere_engine.metrics.analysis import collected_results
    from sphere_engine.metrics.backend import resolve_backend
    from sphere_engine.metrics.per_query import QueryCollector

    try:
        if (query is None) != (gallery is None) or (path is None) == (query is None):
            raise ValueError("give either FILE, or both --query and --gallery")
        resolve_backend(knn_backend)  # refused before anything is read
        is_query = None
        if query is not None and gallery is not None:
            queries, galleries = load_query_gallery(query, gallery)
            embeddings = np.concatenate([queries.embeddings, galleries.embeddings])
            labels = np.concatenate([queries.labels, galleries.labels])
            is_query = np.arange(len(labels)) < len(queries.labels)
            source, class_names = query, queries.class_names
        else:
            assert path is not None
            embeddings, labels, class_names = load_labelled_embeddings(path)
            source = path
        collector = QueryCollector()
        metrics, roc = analysis_metrics(
            embeddings, labels, is_query=is_query, recall_ks=ks, collector=collector,
            backend=knn_backend,
        )  # fmt: skip
        per_query = collected_results(collector, embeddings, labels, is_query)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_metrics(metrics))
    target = Path(out) if out else Path(source).with_suffix(".metrics.json")
    target.write_text(json.dumps(metrics, indent=2, sort_keys=True))
    print(f"metrics written to {target}", file=sys.stderr)

    store = RunStore()
    keep = np.sort(np.random.default_rng(0).permutation(len(labels))[:2000])
    sources = [path] if path is not None else [query, gallery]
    config = {
        "analysis": {
            "source": str(Path(source).resolve()),
            "samples": len(labels),
            "dimension": int(embeddings.shape[1]),
            "protocol": "leave_one_out" if is_query is None else "query_gallery",
            "files": [str(Path(str(f)).resolve()) for f in sources],
        }
    }
    run_id = store.create_run(config, name or Path(source).name, kind="analysis", status="running")
    with _lifecycle(store, run_id) as run:  # ends finished, compacted
        run.tracker.track_eval(metrics, 0)
        if roc is not None:
            run.tracker.track_curve("verification/roc", roc[0].tolist(), roc[1].tolist(), 0)
        run.tracker.track_snapshot(embeddings[keep], labels[keep], 0)  # seeded sample of ≤ 2000
        store_query_results(store, run_id, 0, per_query, class_names)
    print(f"analysis recorded as run {run_id} in {store.home}", file=sys.stderr)
    return 0
