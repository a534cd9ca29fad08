"""The one place where readers run SQL over the store's Parquet files.

Every read lists the live files of the selected runs (restricting the scan to those
runs' folders keeps it fast with many runs), and runs the query on a fresh cursor of a
process-wide in-memory DuckDB database (one per call, so any thread may read). Two
things can go wrong while runs are writing, and both are handled here:

* a listed file vanished (compaction replaced chunks, the run was deleted, or its
  folder is being removed by hand, file by file): list again at once and retry,
  for up to ``VANISHED_RETRY_S``;
* a file is corrupt or foreign (garbage bytes, another schema): it is checked, skipped
  from then on (quarantined in the ``db.file_catalogue.FileCatalogue``), and reported
  through its ``problems()``. Files once read in full are cached as good; when a read
  fails and no unchecked file explains it, those are checked again (a file can be
  damaged after it was read).

Readers depend on the catalogue only; passing a ``RunStore`` reads its catalogue.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from db.file_catalogue import FileCatalogue, FileSource, catalogue_of
from db.schema import TABLES, empty_table, has_schema

log = logging.getLogger(__name__)

ATTEMPTS = 8  # quarantine passes (each finds at least one more bad file)
VANISHED_RETRY_S = 10.0  # a run folder removed file by file: keep listing again this long
_LEADING_WITH = re.compile(r"\s*WITH\s+", re.IGNORECASE)
_lock = threading.Lock()
_base: tuple[int, duckdb.DuckDBPyConnection] | None = None


def cursor() -> duckdb.DuckDBPyConnection:
    """A new connection (cursor) to this process's in-memory DuckDB database."""
    global _base
    with _lock:
        if _base is None or _base[0] != os.getpid():  # never reuse a forked parent's database
            connection = duckdb.connect(":memory:")
            connection.execute("SET parquet_metadata_cache = true")
            _base = (os.getpid(), connection)
        return _base[1].cursor()


# A source is an alias used in the SQL, bound to one table of some runs.
Sources = Mapping[str, tuple[str, Sequence[str]]]


def query_arrow(
    source: FileSource,
    sources: Sources,
    sql: str,
    params: Mapping[str, Any] | None = None,
    *,
    list_files: Callable[[], dict[str, list[Path]]] | None = None,
) -> pa.Table:
    """Run ``sql`` with each alias of ``sources`` defined over its runs' live files.

    The SQL refers to the aliases as tables and may start with its own ``WITH``;
    parameters are bound by name (``$name``); the file lists are bound as
    ``$files_<alias>``. ``list_files`` replaces the default listing (each alias's
    runs' live files) with the caller's; it is called again on every retry.
    """
    for alias, (table, _) in sources.items():
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}; known: {', '.join(TABLES)}")
        if not alias.isidentifier():
            raise ValueError(f"source alias {alias!r} is not an identifier")
    catalogue = catalogue_of(source)
    deadline = time.monotonic() + VANISHED_RETRY_S
    checks = 0
    while True:
        if list_files is not None:
            files = list_files()
        else:
            files = {
                alias: catalogue.live_files(table, run_ids)
                for alias, (table, run_ids) in sources.items()
            }
        try:
            return _execute(sources, files, sql, params or {})
        except duckdb.Error:
            listed = [path for paths in files.values() for path in paths]
            if any(not path.exists() for path in listed) and time.monotonic() < deadline:
                continue  # compacted or removed meanwhile: list again at once, without them
            checks += 1
            if checks < ATTEMPTS and _quarantine_bad_files(catalogue, sources, files):
                continue
            raise


def read_files(source: FileSource, table: str, paths: Sequence[Path]) -> pa.Table:
    """All rows of exactly ``paths`` (one table), skipping and reporting corrupt files."""
    catalogue = catalogue_of(source)
    sources = {"t": (table, ())}
    files = {"t": [p for p in paths if not catalogue.is_bad_file(p)]}
    for _ in range(ATTEMPTS):
        try:
            return _execute(sources, files, "SELECT * FROM t", {})
        except duckdb.Error:
            if not _quarantine_bad_files(catalogue, sources, files):
                raise
            files = {"t": [p for p in files["t"] if not catalogue.is_bad_file(p)]}
    raise RuntimeError(f"too many corrupt files among {len(paths)} {table} files")


def _execute(
    sources: Sources, files: dict[str, list[Path]], sql: str, params: Mapping[str, Any]
) -> pa.Table:
    con = cursor()
    try:
        ctes = []
        bound = dict(params)
        for alias, (table, _) in sources.items():
            if files[alias]:
                source = f"read_parquet($files_{alias})"
                bound[f"files_{alias}"] = [str(path) for path in files[alias]]
            else:  # read_parquet rejects an empty list: an empty table of the same schema
                source = f"_empty_{alias}"
                con.register(source, empty_table(table))
            ctes.append(f"{alias} AS NOT MATERIALIZED (SELECT * FROM {source})")
        # The caller's own WITH clause continues the one defining the sources.
        match = _LEADING_WITH.match(sql)
        body = ", " + sql[match.end() :] if match else " " + sql
        return con.sql("WITH " + ", ".join(ctes) + body, params=bound).to_arrow_table()
    finally:
        con.close()


def _quarantine_bad_files(
    catalogue: FileCatalogue, sources: Sources, files: dict[str, list[Path]]
) -> bool:
    """Check every listed file not yet known good and mark the bad ones; if none is,
    check the known-good ones again (a file can be damaged after it was read). Any?"""
    for trust_cache in (True, False):
        found = False
        for alias, (table, _) in sources.items():
            for path in files[alias]:
                reason = check_file(catalogue, path, table, trust_cache=trust_cache)
                if reason is not None:
                    catalogue.mark_bad_file(path, reason)
                    found = True
        if found:
            return True
    return False


def check_file(
    catalogue: FileCatalogue, path: Path, table: str, *, trust_cache: bool = True
) -> str | None:
    """Why ``path`` cannot be read as ``table`` (``None`` if it can). Results are cached:
    store files are immutable, so a file once read in full stays good, unless a read
    fails and nothing else explains it (``trust_cache=False``)."""
    if trust_cache and catalogue.is_known_good(path):
        return None
    try:
        schema = pq.read_schema(path)
        if not has_schema(schema, table):
            return f"not a {table} file (columns: {', '.join(schema.names)})"
        pq.read_table(path)  # reads every page: catches damage past the footer
    except FileNotFoundError:
        return None  # vanished: not a corruption, the caller lists again
    except (OSError, pa.ArrowException, ValueError) as error:
        return f"unreadable Parquet ({error})"
    catalogue.mark_known_good(path)
    return None
