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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from db.lifecycle import RunLifecycle
from db.store import RunStore
from sphere_engine.catalogue import key_metrics
from sphere_engine.config import RunConfig
from sphere_engine.errors import TrainingDivergedError
from sphere_engine.tracking import CompositeTracker
from sphere_engine.validation import validate
from worker import settings
from worker.progress import ProgressBar


def format_metrics(metrics: Mapping[str, float]) -> str:
    """A two-column text table of metrics, key metrics first."""
    ordered = [k for k in key_metrics() if k in metrics]
    ordered += sorted(k for k in metrics if k not in ordered)
    width = max((len(k) for k in ordered), default=6)
    return "\n".join(f"{name:<{width}}  {metrics[name]:.6g}" for name in ordered)


def _lifecycle(store: RunStore, run_id: str) -> RunLifecycle:
    """The CLI's runs live like a worker's: heartbeat thread, end of run, failures."""
    return RunLifecycle(
        store, run_id, heartbeat_s=settings.heartbeat_interval(), accept_running=True
    )


def train_command(
    config_path: str,
    overrides: list[str],
    name: str | None = None,
    tags: Iterable[str] = (),
    as_json: bool = False,
) -> int:
    """Train in this process, recording into the store; returns the exit code.

    ``as_json``: the result goes to stdout as one JSON object (run id, status, steps,
    device, final metrics, error); everything else goes to stderr."""
    from sphere_engine.train import run_training

    report: dict[str, Any] = {"run_id": None, "name": name, "status": "invalid"}
    try:
        config = RunConfig.from_toml(config_path, overrides)
        validate(config)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return _report(as_json, {**report, "error": str(error)}, 2)
    store = RunStore()
    run_name = name or Path(config_path).stem
    # Recorded as running at once: a queued run that no broker holds could be picked up.
    run_id = store.create_run(
        config.to_dict(), run_name, kind="train", tags=list(tags), status="running"
    )
    report.update(run_id=run_id, name=run_name, home=str(store.home), status="failed")
    print(f"run {run_id} ({run_name}) recorded in {store.home}", file=sys.stderr)
    progress = ProgressBar()
    try:
        with _lifecycle(store, run_id) as run:
            if not config.training.checkpoint_dir:
                config.training.checkpoint_dir = str(run.checkpoint_dir)
            tracker = CompositeTracker(run.tracker, progress)
            result = run_training(config, tracker, run.should_stop)
            if result.cancelled:
                message = f"cancelled at step {result.steps_completed}"
                run.end("cancelled", message, device=result.device)
            else:
                run.end("finished", device=result.device)
    except KeyboardInterrupt:
        progress.close()
        print("\ncancelled", file=sys.stderr)
        return _report(as_json, {**report, "status": "cancelled"}, 130)
    except (TrainingDivergedError, ValueError) as error:  # recorded as the worker does
        progress.close()
        print(f"\nerror: {error}", file=sys.stderr)
        return _report(as_json, {**report, "error": str(error)}, 1)
    progress.close()
    report.update(
        status="cancelled" if result.cancelled else "finished",
        steps=result.steps_completed,
        device=result.device,
        metrics=result.final_metrics,
    )
    if result.cancelled:
        print(f"\ncancelled at step {result.steps_completed}", file=sys.stderr)
        return _report(as_json, report, 130)
    if not as_json:
        print(format_metrics(result.final_metrics))
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


def analyze_command(path: str, out: str | None = None, name: str | None = None) -> int:
    """Metrics for embeddings a user already has; printed, written as JSON, recorded."""
    from sphere_engine.metrics import evaluate_embeddings, load_embeddings_file

    try:
        embeddings, labels = load_embeddings_file(path)
        metrics = evaluate_embeddings(embeddings, labels)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_metrics(metrics))
    target = Path(out) if out else Path(path).with_suffix(".metrics.json")
    target.write_text(json.dumps(metrics, indent=2, sort_keys=True))
    print(f"metrics written to {target}", file=sys.stderr)

    store = RunStore()
    keep = np.sort(np.random.default_rng(0).permutation(len(labels))[:2000])
    config = {
        "analysis": {
            "source": str(Path(path).resolve()),
            "samples": len(labels),
            "dimension": int(embeddings.shape[1]),
        }
    }
    run_id = store.create_run(config, name or Path(path).name, kind="analysis", status="running")
    with _lifecycle(store, run_id) as run:  # ends finished, compacted
        run.tracker.track_eval(metrics, 0)
        run.tracker.track_snapshot(embeddings[keep], labels[keep], 0)  # seeded sample of ≤ 2000
    print(f"analysis recorded as run {run_id} in {store.home}", file=sys.stderr)
    return 0
