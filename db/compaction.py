"""Merging a run's chunks into sorted compacted files, safely under live readers.

A live run is compacted in tiers: the new chunks are merged together with the newest
compacted files no larger than ``TIER_RATIO`` times what is merged so far, into
``compact-<first>-<last>.parquet`` (the seq range it covers; ``compact-<last>`` when it
starts at 0). The compacted files' sizes then grow geometrically from newest to
oldest: a run keeps O(log n) files, each row is rewritten O(log n) times, and a
compaction of a long run never rewrites the whole run (which would cost the training
process time growing with the run). A ``full`` compaction (a run that ended) merges everything into
one file per table.

For each merged table the file is written atomically, then what it covers deleted.
The scalars' bucket summaries (``db.levels``) are written just before their compacted
file, under the same name in ``scalar_levels``. A reader lists either the old files
(and retries if they vanish under it) or the new file, which supersedes every file in
its range even before those are deleted (``db.layout.scan_table``), so no row is ever
read twice or missed. One compaction per run runs at a time (``compaction.lock``),
which keeps the ranges nested or disjoint.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa

from db import layout
from db.atomic import TEMP_PREFIX
from db.chunks import write_table_file
from db.file_catalogue import FileCatalogue
from db.levels import build_levels
from db.reader import read_files
from db.schema import SCALAR_LEVELS, SCALARS, SORT_KEYS, TABLES

STALE_TEMP_S = 3600.0  # temp files older than this are left over from killed writers
#: A compacted file joins a tier merge when it is at most this many times the size of
#: what is merged so far (the newer files): sizes at least double from tier to tier.
TIER_RATIO = 2.0


class CompactionBusy(RuntimeError):
    """Another process is compacting the run (``wait=False``)."""


def compact_run(
    catalogue: FileCatalogue, run_id: str, *, full: bool = True, wait: bool = True
) -> dict[str, int]:
    """Compact every table of ``run_id``; returns the number of files merged per table.

    ``full``: into one file per table (a run that ended); else in tiers (a live run's
    writer, see the module doc). ``wait=False`` raises ``CompactionBusy`` instead of
    waiting for another compaction of the run. A chunk written concurrently with a
    higher sequence number stays a chunk, which is also correct.
    """
    folder = catalogue.existing_run_dir(run_id)  # ValueError for an unknown run
    with _run_lock(folder / layout.COMPACTION_LOCK, wait=wait):
        merged = {}
        for table in TABLES:
            if table == SCALAR_LEVELS:
                continue  # follows the scalars, see _remove_old_levels
            merged[table] = _compact_table(catalogue, run_id, table, full)
        _backfill_levels(catalogue, run_id)
        _remove_old_levels(catalogue, run_id)
    return merged


def _compact_table(catalogue: FileCatalogue, run_id: str, table: str, full: bool) -> int:
    folder = catalogue.table_dir(run_id, table)
    live = layout.scan_table(folder).live
    merging = live if full else _tier(live)
    if len(merging) < 2 and not any(layout.CHUNK_PATTERN.match(p.name) for p in merging):
        merging = []  # one compacted file (or none): nothing to merge
    if merging:
        first = _range(merging[0])[0]
        last = max(_range(p)[1] for p in merging)
        name = layout.compact_name(last, first)
        data = read_files(catalogue, table, merging).sort_by(SORT_KEYS[table])
        if table == SCALARS:  # its levels first: readers then never miss them
            _write_levels(catalogue, run_id, name, data)
        write_table_file(folder / name, table, data)
    for path in layout.scan_table(folder).covered:
        if not catalogue.is_bad_file(path):  # corrupt files stay, for inspection
            path.unlink(missing_ok=True)
    _remove_stale_temp_files(folder)
    return len(merging)


def _tier(live: list[Path]) -> list[Path]:
    """The suffix of ``live`` (ordered by seq) a tiered compaction merges: every chunk
    after the newest compacted file, and the compacted files before them while each
    is at most ``TIER_RATIO`` times what is merged so far."""
    chunks_from = len(live)
    while chunks_from and layout.CHUNK_PATTERN.match(live[chunks_from - 1].name):
        chunks_from -= 1
    if chunks_from == len(live):
        return []  # no new chunks
    start = chunks_from
    merged = sum(_size(p) for p in live[start:])
    while start and _size(live[start - 1]) <= TIER_RATIO * merged:
        start -= 1
        merged += _size(live[start])
    return live[start:]


def _range(path: Path) -> tuple[int, int]:
    span = layout.compact_range(path.name)
    if span is not None:
        return span
    seq = int(layout.CHUNK_PATTERN.match(path.name).group(1))
    return seq, seq


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


@contextmanager
def _run_lock(path: Path, *, wait: bool) -> Iterator[None]:
    """An exclusive ``flock`` on the run's lock file for the whole compaction."""
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CompactionBusy(f"{path.parent.name} is being compacted") from None
        yield
    finally:
        os.close(handle)  # releases the lock


def _write_levels(catalogue: FileCatalogue, run_id: str, name: str, data: pa.Table) -> None:
    folder = catalogue.table_dir(run_id, SCALAR_LEVELS)
    write_table_file(folder / name, SCALAR_LEVELS, build_levels(run_id, data))


def _backfill_levels(catalogue: FileCatalogue, run_id: str) -> None:
    """Levels for compacted scalars files without them (compacted before levels
    existed, or by a compaction killed between its levels and its scalars)."""
    levels = catalogue.table_dir(run_id, SCALAR_LEVELS)
    for path in layout.scan_table(catalogue.table_dir(run_id, SCALARS)).live:
        if layout.compact_range(path.name) and not (levels / path.name).exists():
            _write_levels(catalogue, run_id, path.name, read_files(catalogue, SCALARS, [path]))


def _remove_old_levels(catalogue: FileCatalogue, run_id: str) -> None:
    """Delete levels files inside a live compacted scalars file's range but not its
    own. Others (from a compaction killed before its scalars file) stay: harmless, as
    readers use only the levels file named like a live scalars file."""
    live = layout.scan_table(catalogue.table_dir(run_id, SCALARS)).live
    ranges = [span for p in live if (span := layout.compact_range(p.name))]
    folder = catalogue.table_dir(run_id, SCALAR_LEVELS)
    files = layout.scan_table(folder)
    for path in files.live + files.covered:
        span = layout.compact_range(path.name)
        if span is None or span in ranges or catalogue.is_bad_file(path):
            continue
        if any(first <= span[0] and span[1] <= last for first, last in ranges):
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
