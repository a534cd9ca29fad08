"""Actions that change runs: launch, sweep, cancel, delete, tags, notes.

Each clears the cached listings so the next render shows its effect.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from app.data.cache import store
from app.data.reads import final_metrics, latest_metrics, run, runs


def _clear_listings() -> None:
    for read in (runs, run, latest_metrics, final_metrics):
        read.clear()


def launch_runs(
    configs: Sequence[Mapping[str, Any]],
    *,
    names: Sequence[str | None] = (),
    tags: Sequence[str] = (),
    sweep_id: str | None = None,
    run_tags: Sequence[Sequence[str]] = (),
    project: str | None = None,
) -> list[str]:
    """Enqueue each config (one worker job per run; the launcher validates them all
    before it records any); ``run_tags``: each run's own tags after ``tags``; returns
    the run ids."""
    import worker

    ids = worker.launch_many(
        [dict(config) for config in configs],
        names,
        tuple(tags),
        sweep_id,
        run_tags=run_tags,
        store=store(),
        project=project,
    )
    _clear_listings()
    return ids


def launch_sweep(
    base: Mapping[str, Any],
    grid: Mapping[str, list[Any]],
    seeds: Sequence[int],
    *,
    name: str | None = None,
    tags: Sequence[str] = (),
    project: str | None = None,
) -> tuple[str, list[str]]:
    """Enqueue every grid combination × seed; returns (sweep id, run ids)."""
    import worker

    sweep_id, ids = worker.launch_sweep(
        dict(base), dict(grid), list(seeds), name=name or None, tags=tuple(tags), store=store(),
        project=project,
    )  # fmt: skip
    _clear_listings()
    return sweep_id, list(ids)


def submit_slurm_run(
    config: Mapping[str, Any],
    request: Mapping[str, Any],
    *,
    name: str | None,
    tags: Sequence[str],
    project: str | None = None,
) -> str:
    """Validate and submit one run as a SLURM job; its id. A bad request or a refusal
    by SLURM raises ``ValueError`` with one line."""
    from worker.submit import submit_to_slurm

    run_id = submit_to_slurm(config, request, name, tags, store=store(), project=project)
    _clear_listings()
    return run_id


def new_sweep_id(label: str) -> str:
    """An id grouping the runs of one preset (sortable by time)."""
    slug = "".join(ch if ch.isalnum() else "-" for ch in label.lower()).strip("-")[:24]
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"


def cancel_run(run_id: str) -> None:
    import worker

    worker.cancel(run_id, store=store())
    _clear_listings()


def delete_run(run_id: str) -> None:
    store().delete_run(run_id)
    _clear_listings()


def set_tags(run_id: str, tag_list: Sequence[str]) -> None:
    store().set_tags(run_id, [t.strip() for t in tag_list if t.strip()])
    _clear_listings()


def set_notes(run_id: str, notes: str) -> None:
    store().set_notes(run_id, notes)
    _clear_listings()
