"""Keeping a lab's store tidy: archive / unarchive, delete to the trash, rebuild the
catalogue from the run folders, and ``gc`` (checkpoints beyond each run's retention
policy, and the trash)."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from db import layout
from db.catalogue import journal, snapshot
from db.catalogue.rows import folder_bytes, row_of
from db.records import TERMINAL
from sphere_engine.catalogue import MAIN_METRICS, main_metric
from sphere_engine.catalogue.retention import DEFAULT_POLICY, checkpoint_step, kept_steps

if TYPE_CHECKING:
    from db.store import RunStore


def archive(store: RunStore, run_ids: Iterable[str], archived: bool = True) -> list[str]:
    """Archive (or unarchive) each run; the ids changed. Unknown ids: ``ValueError``
    naming the first, before anything changes."""
    ids = list(run_ids)
    for run_id in ids:
        store.files.existing_run_dir(run_id)
    for run_id in ids:
        store.set_archived(run_id, archived)
    return ids


def delete(store: RunStore, run_ids: Iterable[str]) -> list[str]:
    """Move each run to the trash (``gc`` frees it); checked first, as ``archive``."""
    ids = list(run_ids)
    for run_id in ids:
        store.files.existing_run_dir(run_id)
    for run_id in ids:
        store.delete_run(run_id)
    return ids


def rebuild_index(store: RunStore) -> int:
    """Rebuild the catalogue from every run folder; how many runs it holds."""
    return snapshot.rebuild(store.files, journal.folder_run_ids(store.files))


@dataclass
class GcReport:
    """What ``gc`` freed (or would free, with ``dry_run``)."""

    checkpoints: list[tuple[str, Path, int]] = field(default_factory=list)  # run, file, bytes
    trash: list[tuple[Path, int]] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(b for _, _, b in self.checkpoints) + sum(b for _, b in self.trash)


def surplus_checkpoints(store: RunStore, run_id: str, policy: str) -> list[Path]:
    """The checkpoint files of an ended run that ``policy`` does not keep."""
    folder = store.run_dir(run_id) / "checkpoints"
    try:
        files = {s: p for p in folder.iterdir() if (s := checkpoint_step(p.name)) is not None}
    except FileNotFoundError:
        return []
    if len(files) <= 1 or policy == "all":
        return []
    from db.queries import eval_series  # DuckDB: only for runs with checkpoints to weigh

    evals = eval_series(store, run_id, list(MAIN_METRICS))
    main = main_metric(set(evals["name"]))
    rows = evals[evals["name"] == main]
    scores = dict(zip(rows["step"].astype(int), rows["value"].astype(float), strict=True))
    keep = kept_steps(policy, files, scores, finished=True)
    return [path for step, path in sorted(files.items()) if step not in keep]


def gc(store: RunStore, *, dry_run: bool = False) -> GcReport:
    """Free what ended runs hold beyond their ``training.keep_checkpoints`` (default
    the last and the best) and empty the trash; ``dry_run`` only reports."""
    report = GcReport()
    for record in store.list_runs(status=sorted(TERMINAL)):
        training = record.config.get("training")
        policy = (training or {}).get("keep_checkpoints", DEFAULT_POLICY)
        surplus = surplus_checkpoints(store, record.run_id, str(policy))
        for path in surplus:
            report.checkpoints.append((record.run_id, path, path.stat().st_size))
        if surplus and not dry_run:
            with journal.pending(store.files, record.run_id):  # its disk usage changes
                for path in surplus:
                    path.unlink(missing_ok=True)
    trash = store.home / layout.TRASH
    for entry in sorted(trash.iterdir()) if trash.is_dir() else []:
        size = folder_bytes(entry) if entry.is_dir() else entry.stat().st_size
        report.trash.append((entry, size))
        if not dry_run:
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    return report


def refresh(store: RunStore, run_id: str) -> None:
    """Write the run's current row (after a change made outside the writers)."""
    journal.write_delta(store.files, row_of(store.files, run_id))
