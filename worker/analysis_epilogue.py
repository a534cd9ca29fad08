"""What every ``spherescope analyze`` does once its metrics are computed: print them,
write them as strict JSON, and record the analysis as a run (``publish_analysis``);
and the lifecycle the CLI's in-process runs live under (``cli_lifecycle``).

The analysis run goes where a training run of this process would: the store under
``SPHERESCOPE_HOME``, or the stack's store through the ingest service when
``SPHERESCOPE_URL`` is set (``db.remote.writer_store``); everything it records goes
through the run's tracker, so both stores receive the same.

The metrics JSON is a flat object of metric → number, plus ``notes`` (why a value is
null or a target missing) and any extra fields the caller records (the face
protocols' ``mode``). It never holds NaN or Infinity (``db.json_plain``): a value that
is not a number is ``null``, with its reason in ``notes``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from db.heartbeat import heartbeat_interval
from db.json_plain import json_plain
from db.lifecycle import RunLifecycle
from db.remote import store_location, writer_store
from db.remote.client import IngestRefused, IngestUnreachable
from db.writer_store import WriterStore
from sphere_engine.catalogue import key_metrics
from sphere_engine.metrics.verification import MIN_IMPOSTORS_PER_FAR

TAR_AT_FAR = "verification/tar@far="


def cli_lifecycle(store: WriterStore, run_id: str) -> RunLifecycle:
    """The CLI's runs live like a worker's: heartbeat thread, end of run, failures."""
    return RunLifecycle(store, run_id, heartbeat_s=heartbeat_interval(), accept_running=True)


def with_class_names(results: Any, class_names: Sequence[str] | None) -> SimpleNamespace:
    """Per-query results (``.queries``, ``.classes``) with a ``class_name`` column when
    the labels came from names (what ``track_query_results`` stores)."""
    classes = dict(results.classes)
    if class_names is not None:
        classes["class_name"] = [str(class_names[int(label)]) for label in classes["label"]]
    return SimpleNamespace(queries=dict(results.queries), classes=classes)


def format_metrics(metrics: Mapping[str, float]) -> str:
    """A two-column text table of metrics, key metrics first."""
    ordered = [k for k in key_metrics() if k in metrics]
    ordered += sorted(k for k in metrics if k not in ordered)
    width = max((len(k) for k in ordered), default=6)
    return "\n".join(f"{name:<{width}}  {metrics[name]:.6g}" for name in ordered)


def missing_value_notes(metrics: Mapping[str, float], noted: Sequence[str] = ()) -> list[str]:
    """Why each metric that is not a finite number has no value (unless a note in
    ``noted`` already says: ``"<key>: ..."``)."""
    notes = []
    for key, value in sorted(metrics.items()):
        if math.isfinite(value) or any(note.startswith(f"{key}: ") for note in noted):
            continue
        reason = "not defined on this input"
        impostors = metrics.get("verification/impostor_pairs")
        if key.startswith(TAR_AT_FAR) and impostors is not None:
            needed = math.ceil(MIN_IMPOSTORS_PER_FAR / float(key.removeprefix(TAR_AT_FAR)))
            reason = f"{int(impostors):,} impostor pairs; this FAR needs {needed:,}"
        notes.append(f"{key}: null ({reason})")
    return notes


def write_metrics_json(
    target: Path, metrics: Mapping[str, float], notes: Sequence[str], extra: Mapping[str, Any]
) -> None:
    document = {**metrics, **extra, "notes": list(notes)}
    target.write_text(json.dumps(json_plain(document), indent=2, sort_keys=True, allow_nan=False))


def publish_analysis(
    metrics: Mapping[str, float],
    *,
    target: Path,
    config: dict[str, Any],
    name: str,
    notes: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
    record: Callable[[RunLifecycle], None] | None = None,
) -> int:
    """Print ``metrics`` (notes on stderr), write them to ``target`` as JSON, record an
    analysis run of ``config`` (``record(run)`` stores anything beyond the metrics,
    through ``run.tracker``); the exit code (0, or 2 when the stack refused the run)."""
    notes = list(notes) + missing_value_notes(metrics, notes)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(format_metrics(metrics))
    write_metrics_json(target, metrics, notes, extra or {})
    print(f"metrics written to {target}", file=sys.stderr)
    try:
        store = writer_store()
        run_id = store.create_run(config, name, kind="analysis", status="running")
    except (IngestRefused, IngestUnreachable, ValueError) as error:  # SPHERESCOPE_URL's
        print(f"error: {error}", file=sys.stderr)
        return 2
    with cli_lifecycle(store, run_id) as run:  # ends finished, compacted
        run.tracker.track_eval(dict(metrics), 0)
        if record is not None:
            record(run)
    print(f"analysis recorded as run {run_id} in {store_location(store)}", file=sys.stderr)
    return 0
