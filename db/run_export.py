"""A whole run out of SphereScope: its tables as CSV/Parquet files, or TensorBoard logs.

``export_run_files`` writes the per-step scalars, the evaluations and the tracked-sample
norms of one run (``db.export.export_run``, one file per table) into a folder;
``tensorboard`` event files come from ``db.tensorboard_export``. Used by
``spherescope export`` and the Run page's downloads.
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from db.export import EXPORTABLE, export_run
from db.selection import check_runs

if TYPE_CHECKING:
    from db.store import RunStore

FORMATS = ("csv", "parquet", "tensorboard")


def export_run_files(
    store: RunStore, run_id: str, out_dir: str | os.PathLike[str], fmt: str = "csv"
) -> list[Path]:
    """Write run ``run_id`` into folder ``out_dir`` (created if missing); the paths written.

    csv/parquet: ``<run_id>-scalars.<fmt>``, ``<run_id>-evals.<fmt>``,
    ``<run_id>-norms.<fmt>``; tensorboard: event files in ``<out_dir>/<run_id>/``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    check_runs(store, [run_id])  # ValueError naming the run when it is unknown
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "tensorboard":
        from db.tensorboard_export import write_tensorboard

        return [write_tensorboard(store, run_id, folder / run_id)]
    return [
        export_run(store, run_id, folder / f"{run_id}-{table}.{fmt}", fmt, table=table)
        for table in EXPORTABLE
    ]


def export_zip(store: RunStore, run_id: str, fmt: str) -> bytes:
    """``export_run_files`` in ``fmt`` as one zip archive (the Run page's downloads)."""
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="spherescope-export-") as scratch:
        folder = Path(scratch)
        export_run_files(store, run_id, folder, fmt)
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()
