"""Merging a run's chunks into one sorted file per table, safely under live readers.

For each table: read every live file (the previous compacted file and the chunks after
it), write ``compact-<max seq>.parquet`` atomically, then delete what it covers. The
scalars' bucket summaries (``db.levels``) are written just before their compacted
file, under the same name in ``scalar_levels``. A
reader lists either the old files (and retries if they vanish under it) or the new
compacted file, which supersedes every chunk with a lower sequence number even before
those chunks are deleted, so no row is ever read twice or missed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa

from db import layout
from db.atomic import TEMP_PREFIX
from db.catalogue import FileCatalogue
from db.chunks import write_table_file
from db.levels import build_levels
from db.reader import read_files
from db.schema import SCALAR_LEVELS, SCALARS, SORT_KEYS, TABLES

STALE_TEMP_S = 3600.0  # temp files older than this are left over from killed writers


def compact_run(catalogue: FileCatalogue, run_id: str) -> dict[str, int]:
    """Compact every table of ``run_id``; returns the number of files merged per table.

    Call it when the run's writer has finished (a chunk written concurrently with a
    higher sequence number stays a chunk, which is also correct).
    """
    catalogue.existing_run_dir(run_id)  # ValueError for an unknown run
    merged = {}
    for table in TABLES:
        if table == SCALAR_LEVELS:
            continue  # follows the scalars, see _remove_old_levels
        folder = catalogue.table_dir(run_id, table)
        files = layout.scan_table(folder)
        live_chunks = [p for p in files.live if layout.CHUNK_PATTERN.match(p.name)]
        merged[table] = 0
        if live_chunks:
            data = read_files(catalogue, table, files.live).sort_by(SORT_KEYS[table])
            if table == SCALARS:  # its levels first: readers then never miss them
                _write_levels(catalogue, run_id, files.max_seq, data)
            write_table_file(folder / layout.compact_name(files.max_seq), table, data)
            merged[table] = len(files.live)
        elif table == SCALARS and files.live:
            _backfill_levels(catalogue, run_id, files.live[0])
        for path in layout.scan_table(folder).covered:
            if not catalogue.is_bad_file(path):  # corrupt files stay, for inspection
                path.unlink(missing_ok=True)
        _remove_stale_temp_files(folder)
    _remove_old_levels(catalogue, run_id)
    return merged


def _write_levels(catalogue: FileCatalogue, run_id: str, seq: int, data: pa.Table) -> None:
    folder = catalogue.table_dir(run_id, SCALAR_LEVELS)
    write_table_file(folder / layout.compact_name(seq), SCALAR_LEVELS, build_levels(run_id, data))


def _backfill_levels(catalogue: FileCatalogue, run_id: str, compacted: Path) -> None:
    """Levels for a file compacted before levels existed (or by a killed compaction)."""
    match = layout.COMPACT_PATTERN.match(compacted.name)
    if match and not (catalogue.table_dir(run_id, SCALAR_LEVELS) / compacted.name).exists():
        _write_levels(
            catalogue, run_id, int(match.group(1)), read_files(catalogue, SCALARS, [compacted])
        )


def _remove_old_levels(catalogue: FileCatalogue, run_id: str) -> None:
    """Delete levels files older than the compacted scalars file. Newer ones (from a
    compaction killed before its scalars file, or one running now) stay: they are
    harmless, as readers use only the levels file named like the scalars file."""
    live = layout.scan_table(catalogue.table_dir(run_id, SCALARS)).live
    match = layout.COMPACT_PATTERN.match(live[0].name) if live else None
    folder = catalogue.table_dir(run_id, SCALAR_LEVELS)
    if match is not None:
        current = int(match.group(1))
        files = layout.scan_table(folder)
        for path in files.live + files.covered:
            found = layout.COMPACT_PATTERN.match(path.name)
            if found and int(found.group(1)) < current and not catalogue.is_bad_file(path):
                path.unlink(missing_ok=True)
    _remove_stale_temp_files(folder)


def _remove_stale_temp_files(folder: Path) -> None:
    cutoff = time.time() - STALE_TEMP_S
    try:
        candidates = list(folder.glob(f"{TEMP_PREFIX}*"))
    except OSError:
        return
    for path in candidates:
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except FileNotFoundError:
            pass
