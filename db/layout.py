"""Where everything lives under ``SPHERESCOPE_HOME`` and which files a reader may read.

    <home>/runs/<run_id>/meta.json         name, kind, config, created time (written once)
    <home>/runs/<run_id>/status.json       status, message, started/finished, device, host
    <home>/runs/<run_id>/heartbeat.json    progress step/total and heartbeat time
    <home>/runs/<run_id>/user.json         tags, notes (edited from the dashboard)
    <home>/runs/<run_id>/run_info.json     what the trainer reported with track_run_info
    <home>/runs/<run_id>/CANCEL            cancel flag (existence is the signal)
    <home>/runs/<run_id>/executor.json     where it was submitted (SLURM job id, limits)
    <home>/runs/<run_id>/scheduler.json    the scheduler's state and reason for its job
    <home>/runs/<run_id>/watched           touched by a live Run page (its mtime: when)
    <home>/runs/<run_id>/tables/<table>/c-<seq>-<token>.parquet   immutable chunks
    <home>/runs/<run_id>/tables/<table>/compact-<seq>.parquet     all chunks with seq <= <seq>
    <home>/runs/<run_id>/tables/<table>/compact-<first>-<last>.parquet   chunks with seq in
                                           first..last (a tier, see db.compaction)
    <home>/runs/<run_id>/tables/scalar_levels/compact-*.parquet  bucket summaries of the
                                           scalars file of the same name (see db.levels)
    <home>/runs/<run_id>/compaction.lock   held (flock) by the run's one compaction at a time
    <home>/runs/<run_id>/checkpoints/      checkpoint files of the run
    <home>/trash/                          deleted runs until `spherescope store gc`
    <home>/catalogue/                      one row per run for listings (db.catalogue)

Each JSON file is written by one party only (worker, tracker, dashboard), so a
read-modify-write of one never loses another party's update.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_HOME = "./spherescope-data"
HOME_ENV = "SPHERESCOPE_HOME"

RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
CHUNK_PATTERN = re.compile(r"^c-(\d{10})-([0-9a-f]{1,32})\.parquet$")
#: compact-<last> (seq 0..last) or compact-<first>-<last> (seq first..last)
COMPACT_PATTERN = re.compile(r"^compact-(?:(\d{10})-)?(\d{10})\.parquet$")

META = "meta.json"
STATUS = "status.json"
HEARTBEAT = "heartbeat.json"
USER = "user.json"
RUN_INFO = "run_info.json"
CANCEL = "CANCEL"
COMPACTION_LOCK = "compaction.lock"
WATCHED = "watched"  # empty; its modification time says when a live page last looked
CLAIM = "claim"  # created with O_EXCL by the one process that takes a queued run
EXECUTOR = "executor.json"  # written once by the submitter (db.scheduler_record)
SCHEDULER = "scheduler.json"  # written by whoever polls the scheduler (db.scheduler_record)
TRASH = "trash"  # <home>/trash: deleted runs until `spherescope store gc`
ENDED = "ended.json"  # a copy of the terminal status, to rebuild a damaged status.json


def resolve_home(home: str | os.PathLike[str] | None) -> Path:
    """``home``, else ``$SPHERESCOPE_HOME``, else ``./spherescope-data``, made absolute."""
    if home is None:
        home = os.environ.get(HOME_ENV) or DEFAULT_HOME
    return Path(home).expanduser().resolve()


def ensure_folder(folder: Path) -> Path:
    """``folder`` made with its parents, even while another process's
    ``remove_empty_folders`` removes an empty parent between the two mkdirs."""
    for _ in range(5):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return folder
        except FileNotFoundError:
            continue
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def remove_empty_folders(folder: Path, home: Path) -> None:
    """Remove ``folder`` and then each parent below ``home`` while they are empty: what a
    remote writer made on this side (a run's folder for its disk reserve, its spool)
    and no longer needs. A folder that holds anything stops it."""
    home = home.resolve()
    folder = folder.resolve()
    while folder != home and home in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty (a local store's run folder always holds its meta)
            return
        folder = folder.parent


def check_run_id(run_id: object) -> str:
    """Return ``run_id`` if it is a well-formed id (safe as a folder name), else raise."""
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.match(run_id):
        raise ValueError(
            f"run id {run_id!r} is malformed: expected letters, digits, '-' or '_' "
            "(at most 64 characters)"
        )
    return run_id


def chunk_name(seq: int, token: str) -> str:
    return f"c-{seq:010d}-{token}.parquet"


def compact_name(last: int, first: int = 0) -> str:
    """The compacted file of the chunks with seq ``first``..``last``."""
    if first == 0:
        return f"compact-{last:010d}.parquet"
    return f"compact-{first:010d}-{last:010d}.parquet"


def compact_range(name: str) -> tuple[int, int] | None:
    """(first, last) seq a compacted file covers, None for any other name."""
    match = COMPACT_PATTERN.match(name)
    if match is None:
        return None
    return int(match.group(1) or 0), int(match.group(2))


@dataclass(frozen=True)
class TableFiles:
    """The files of one run's table that a reader should read, and what else is there."""

    live: list[Path]  # compacted files no other contains, then chunks none covers; by seq
    covered: list[Path]  # chunks and compacted files inside a live compacted file's range
    foreign: list[Path]  # names that are neither chunks, compacted files nor temp files
    max_seq: int  # highest sequence number seen (chunks and compacted files), -1 if none


def scan_table(folder: Path) -> TableFiles:
    """Classify the files of one table folder; a missing folder has no files.

    Compaction merges a suffix of the live files into one file whose range spans
    theirs (``db.compaction``; one compaction per run at a time), so compacted ranges
    are nested or disjoint: the live ones are those no other range contains, and every
    row is in exactly one live file."""
    chunks: list[tuple[int, Path]] = []
    compacts: list[tuple[int, int, Path]] = []
    foreign: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return TableFiles([], [], [], -1)
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue  # temporary files of writers (".tmp-...") are never read
        match = CHUNK_PATTERN.match(name)
        if match:
            chunks.append((int(match.group(1)), Path(entry.path)))
            continue
        span = compact_range(name)
        if span is not None:
            compacts.append((*span, Path(entry.path)))
            continue
        foreign.append(Path(entry.path))
    # widest first: a range is live unless a live one already overlaps it
    compacts.sort(key=lambda c: (c[0], -c[1]))
    ranges: list[tuple[int, int]] = []
    live: list[tuple[int, Path]] = []
    covered: list[Path] = []
    for first, last, path in compacts:
        if ranges and first <= ranges[-1][1]:
            covered.append(path)
        else:
            ranges.append((first, last))
            live.append((first, path))

    def inside(seq: int) -> bool:
        return any(first <= seq <= last for first, last in ranges)

    for seq, path in chunks:
        if inside(seq):
            covered.append(path)
        else:
            live.append((seq, path))
    live.sort(key=lambda item: item[0])
    max_seq = max([seq for seq, _ in chunks] + [last for _, last, _ in compacts] + [-1])
    return TableFiles([path for _, path in live], covered, foreign, max_seq)
