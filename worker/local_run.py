"""In-process commands of the CLI: ``spherescope train`` and ``spherescope analyze``.

Both record into the run store like any other run, so the dashboard shows them
next to runs executed by the workers, and both live through ``db.lifecycle.RunLifecycle``
like a worker's run: heartbeat thread (a long evaluation is never marked lost), cancel
flag from the dashboard, end of run with compaction, failures recorded the same way.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

import numpy as np

from db import run_log
from db.lifecycle import RunLifecycle
from db.store import RunStore
from sphere_engine.catalogue import key_metrics
from sphere_engine.config import RunConfig
from sphere_engine.errors import TrainingDivergedError
from sphere_engine.tracking import BaseTracker, CompositeTracker
from sphere_engine.validation import validate
from worker import settings


class ProgressBar(BaseTracker):
    """A one-line progress bar on stderr (redrawn at most 5 times a second)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.last_draw = 0.0
        self.loss = float("nan")
        self.norm_var = float("nan")

    def track_many(self, values: Mapping[str, float], step: int) -> None:
        self.loss = values.get("loss/total", self.loss)
        self.norm_var = values.get("norm/var", self.norm_var)

    def track_progress(self, step: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last_draw < 0.2 and step != total:
            return
        self.last_draw = now
        width = 30
        filled = int(width * step / max(total, 1))
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(
            f"\r[{bar}] {step}/{total}  loss {self.loss:.4f}  norm var {self.norm_var:.4g}"
        )
        if step == total:
            self.stream.write("\n")
        self.stream.flush()


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


def train_command(config_path: str, overrides: list[str], name: str | None = None) -> int:
    """Train in this process, recording into the store; returns the exit code."""
    from sphere_engine.train import run_training

    try:
        config = RunConfig.from_toml(config_path, overrides)
        validate(config)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    store = RunStore()
    run_name = name or Path(config_path).stem
    # Recorded as running at once: a queued run that no broker holds could be picked up.
    run_id = store.create_run(config.to_dict(), run_name, kind="train", status="running")
    print(f"run {run_id} ({run_name}) recorded in {store.home}", file=sys.stderr)
    try:
        with _lifecycle(store, run_id) as run, run_log.capture(store.run_dir(run_id)):
            if not config.training.checkpoint_dir:
                config.training.checkpoint_dir = str(run.checkpoint_dir)
            tracker = CompositeTracker(run.tracker, ProgressBar())
            result = run_training(config, tracker, run.should_stop)
            if result.cancelled:
                message = f"cancelled at step {result.steps_completed}"
                run.end("cancelled", message, device=result.device)
            else:
                run.end("finished", device=result.device)
    except KeyboardInterrupt:
        print("\ncancelled", file=sys.stderr)
        return 130
    except (TrainingDivergedError, ValueError) as error:  # recorded as the worker does
        print(f"\nerror: {error}", file=sys.stderr)
        return 1
    if result.cancelled:
        print(f"\ncancelled at step {result.steps_completed}", file=sys.stderr)
        return 130
    print(format_metrics(result.final_metrics))
    return 0


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
