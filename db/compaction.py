"""Merging a run's chunks into one sorted file per table, safely under live readers.

For each table: read every live file (the previous compacted file and the chunks after
it), write ``compact-<max seq>.parquet`` atomically, then delete what it covers. A
reader lists either the old files (and retries if they vanish under it) or the new
compacted file, which supersedes every chunk with a lower sequence number even before
those chunks are deleted, so no row is ever read twice or missed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from db import layout
from db.atomic import TEMP_PREFIX
from db.chunks import write_table_file
from db.reader import read_files
from db.schema import SORT_KEYS, TABLES

if TYPE_CHECKING:
    from db.store import RunStore

STALE_TEMP_S = 3600.0  # temp files older than this are left over from killed writers


def compact_run(store: RunStore, run_id: str) -> dict[str, int]:
    """Compact every table of ``run_id``; returns the number of files merged per table.

    Call it when the run's writer has finished (a chunk written concurrently with a
    higher sequence number stays a chunk, which is also correct).
    """
    store.get_run(run_id)  # ValueError for an unknown run
    merged = {}
    for table in TABLES:
        folder = store.table_dir(run_id, table)
        files = layout.scan_table(folder)
        live_chunks = [p for p in files.live if layout.CHUNK_PATTERN.match(p.name)]
        merged[table] = 0
        if live_chunks:
            data = read_files(store, table, files.live).sort_by(SORT_KEYS[table])
            write_table_file(folder / layout.compact_name(files.max_seq), table, data)
            merged[table] = len(files.live)
        for path in layout.scan_table(folder).covered:
            if not store.is_bad_file(path):  # corrupt files stay, for inspection
                path.unlink(missing_ok=True)
        _remove_stale_temp_files(folder)
    return merged


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
