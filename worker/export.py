"""``spherescope export``: a run's logged values as files other tools read."""

from __future__ import annotations

import sys

from db.run_export import export_run_files
from db.store import RunStore


def export_command(run_id: str, fmt: str, out_dir: str) -> int:
    """Write run ``run_id`` in ``fmt`` into ``out_dir``; prints the paths; the exit code."""
    store = RunStore()
    try:
        paths = export_run_files(store, run_id, out_dir, fmt)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in paths:
        print(path)
    if fmt == "tensorboard":
        print(f"view with: tensorboard --logdir {paths[0].parent}", file=sys.stderr)
    return 0
