"""In-process commands of the CLI: ``spherescope train`` and ``spherescope analyze``.

Both record into the run store like any other run, so the dashboard shows them
next to runs executed by the workers, and both live through ``db.lifecycle.RunLifecycle``
like a worker's run: heartbeat thread (a long evaluation is never marked lost), cancel
flag from the dashboard, end of run with compaction, failures recorded the same way.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from db import run_log
from db.json_plain import json_plain
from db.lifecycle import RunLifecycle
from db.remote import store_location, writer_store
from db.remote.client import IngestRefused, IngestUnreachable
from db.write_errors import StoreWriteError
from db.writer_store import WriterStore
from sphere_engine.config import RunConfig
from sphere_engine.errors import TrainingDivergedError
from sphere_engine.tracking import Tracker
from sphere_engine.validation import validated_config
from worker.analysis_epilogue import (
    cli_lifecycle,
    format_metrics,
    publish_analysis,
    with_class_names,
)
from worker.findings_summary import findings_json, format_findings, stored_run_findings
from worker.progress import ProgressBar
from worker.train_in_run import train_in_run

if TYPE_CHECKING:
    from sphere_engine.train import TrainingResult


def record_train_run(
    store: WriterStore,
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
    print(f"run {run_id} ({name}) recorded in {store_location(store)}", file=sys.stderr)
    return run_id


def train_recorded(
    store: WriterStore, run_id: str, config: RunConfig, progress: Tracker | None = None
) -> TrainingResult:
    """Train a validated ``config`` in this process as run ``run_id`` (recorded by
    ``record_train_run``), with the lifecycle a worker uses: heartbeat, cancel flag, end
    of run, failures recorded on the run and re-raised."""
    with cli_lifecycle(store, run_id) as run, run_log.capture(store.run_dir(run_id)):
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
    run_name = name or Path(config_path).stem
    try:
        store = writer_store()
        run_id = record_train_run(store, config, run_name, tags=list(tags), project=project)
    except (IngestRefused, IngestUnreachable, ValueError) as error:  # SPHERESCOPE_URL's,
        # or a malformed project name
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
    if result.message:  # how it finished: "stopped early at step N: ..."
        report["message"] = result.message
    if not as_json:
        print(format_metrics(result.final_metrics))
        print(format_findings(found))
        if result.message:
            print(f"\n{result.message}", file=sys.stderr)
    return _report(as_json, report, 0)


def _report(as_json: bool, report: Mapping[str, Any], code: int) -> int:
    """Print ``report`` as one JSON line on stdout when asked; returns ``code``."""
    if as_json:
        print(json.dumps(json_plain(report), sort_keys=True, allow_nan=False), flush=True)
    return code


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
    from sphere_engine.metrics import analysis_metrics
    from sphere_engine.metrics.analysis import collected_results
    from sphere_engine.metrics.backend import resolve_backend
    from sphere_engine.metrics.per_query import QueryCollector

    try:
        resolve_backend(knn_backend)  # refused before anything is read
        embeddings = _AnalysedEmbeddings.read(path, query, gallery)
        collector = QueryCollector()
        metrics, roc = analysis_metrics(
            embeddings.vectors, embeddings.labels, is_query=embeddings.is_query,
            recall_ks=ks, collector=collector, backend=knn_backend,
        )  # fmt: skip
        per_query = collected_results(
            collector, embeddings.vectors, embeddings.labels, embeddings.is_query
        )
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    def record(run: RunLifecycle) -> None:
        """The ROC, a seeded sample of ≤ 2000 embeddings and the per-query results."""
        vectors, labels = embeddings.vectors, embeddings.labels
        if roc is not None:
            run.tracker.track_curve("verification/roc", roc[0].tolist(), roc[1].tolist(), 0)
        keep = np.sort(np.random.default_rng(0).permutation(len(labels))[:2000])
        run.tracker.track_snapshot(vectors[keep], labels[keep], 0)
        run.tracker.track_query_results(with_class_names(per_query, embeddings.class_names), 0)

    source = Path(embeddings.source)
    return publish_analysis(
        metrics,
        target=Path(out) if out else source.with_suffix(".metrics.json"),
        config={"analysis": embeddings.description()},
        name=name or source.name,
        record=record,
    )


@dataclass(frozen=True)
class _AnalysedEmbeddings:
    """The embeddings ``analyze`` reads: one labelled file, or a query and a gallery
    file concatenated (``is_query`` marks the queries)."""

    vectors: np.ndarray
    labels: np.ndarray
    class_names: Any
    is_query: np.ndarray | None
    files: tuple[str, ...]

    @property
    def source(self) -> str:
        return self.files[0]

    @classmethod
    def read(cls, path: str | None, query: str | None, gallery: str | None):
        from sphere_engine.metrics import load_labelled_embeddings, load_query_gallery

        if (query is None) != (gallery is None) or (path is None) == (query is None):
            raise ValueError("give either FILE, or both --query and --gallery")
        if path is not None:
            return cls(*load_labelled_embeddings(path), None, (path,))
        assert query is not None and gallery is not None
        queries, galleries = load_query_gallery(query, gallery)
        labels = np.concatenate([queries.labels, galleries.labels])
        return cls(
            np.concatenate([queries.embeddings, galleries.embeddings]),
            labels,
            queries.class_names,
            np.arange(len(labels)) < len(queries.labels),
            (query, gallery),
        )

    def description(self) -> dict[str, Any]:
        """The analysis run's config."""
        return {
            "source": str(Path(self.source).resolve()),
            "samples": len(self.labels),
            "dimension": int(self.vectors.shape[1]),
            "protocol": "leave_one_out" if self.is_query is None else "query_gallery",
            "files": [str(Path(f).resolve()) for f in self.files],
        }
