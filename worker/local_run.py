"""In-process commands of the CLI: ``spherescope train`` and ``spherescope analyze``.

Both record into the run store like any other run, so the dashboard shows them
next to runs executed by the workers.
"""

from __future__ import annotations

import json
import socket
import sys
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

import numpy as np

from db.store import RunStore
from sphere_engine.config import RunConfig
from sphere_engine.tracking import BaseTracker, CompositeTracker

KEY_METRICS = ("recall@1", "map@r", "nmi", "f1", "norm/var", "classifier_accuracy")


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
    ordered = [k for k in KEY_METRICS if k in metrics]
    ordered += sorted(k for k in metrics if k not in ordered)
    width = max((len(k) for k in ordered), default=6)
    return "\n".join(f"{name:<{width}}  {metrics[name]:.6g}" for name in ordered)


def train_command(config_path: str, overrides: list[str], name: str | None = None) -> int:
    """Train in this process, recording into the store; returns the exit code."""
    from sphere_engine.train import TrainingDivergedError, run_training

    try:
        config = RunConfig.from_toml(config_path, overrides)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    store = RunStore()
    run_name = name or Path(config_path).stem
    run_id = store.create_run(config.to_dict(), run_name, kind="train", status="running")
    if not config.training.checkpoint_dir:
        config.training.checkpoint_dir = str(store.checkpoint_dir(run_id))
    store.set_status(run_id, "running", host=socket.gethostname())
    print(f"run {run_id} ({run_name}) recorded in {store.home}", file=sys.stderr)
    tracker = store.tracker(run_id)
    try:
        result = run_training(config, CompositeTracker(tracker, ProgressBar()))
    except KeyboardInterrupt:
        tracker.flush()
        store.end_run(run_id, "cancelled", "interrupted from the keyboard")
        print("\ncancelled", file=sys.stderr)
        return 130
    except (TrainingDivergedError, ValueError) as error:
        store.end_run(run_id, "failed", str(error))
        print(f"\nerror: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        store.set_status(
            run_id, "failed", f"{type(error).__name__}: {error}\n" + traceback.format_exc(limit=5)
        )
        raise
    store.end_run(run_id, "finished", device=result.device)
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
    tracker = store.tracker(run_id)
    tracker.track_eval(metrics, 0)
    tracker.track_snapshot(embeddings[keep], labels[keep], 0)  # a seeded sample of ≤ 2000
    tracker.flush()
    store.set_status(run_id, "finished")
    print(f"analysis recorded as run {run_id} in {store.home}", file=sys.stderr)
    return 0
