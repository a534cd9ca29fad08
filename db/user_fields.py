"""What people and trainers add to a run after it was recorded: tags and notes
(``user.json``, edited from the dashboard) and run info (``run_info.json``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from db import layout
from db.atomic import write_json_atomic
from db.catalogue import journal
from db.file_catalogue import FileCatalogue
from db.json_plain import json_plain
from db.records import check_tags
from db.run_index import read_optional


def set_tags(catalogue: FileCatalogue, run_id: str, tags: Iterable[str]) -> None:
    _update_user(catalogue, run_id, tags=check_tags(tags))


def set_notes(catalogue: FileCatalogue, run_id: str, notes: str) -> None:
    if not isinstance(notes, str):
        raise ValueError(f"notes must be a string, got {notes!r}")
    _update_user(catalogue, run_id, notes=notes)


def set_archived(catalogue: FileCatalogue, run_id: str, archived: bool) -> None:
    """Archive (hide from the default listings; still searchable) or unarchive a run."""
    _update_user(catalogue, run_id, archived=bool(archived))


def _update_user(catalogue: FileCatalogue, run_id: str, **changes: Any) -> None:
    folder = catalogue.existing_run_dir(run_id)
    with journal.pending(catalogue, run_id):
        doc = read_optional(catalogue, folder / layout.USER) or {}
        doc.update(changes)
        write_json_atomic(folder / layout.USER, doc)


def update_run_info(catalogue: FileCatalogue, run_id: str, info: Mapping[str, Any]) -> None:
    """Merge ``info`` (from ``track_run_info``) into the run's info; values that are
    not JSON (numpy scalars, paths, NaN, ...) are stored by ``db.json_plain``."""
    if not isinstance(info, Mapping):
        raise ValueError(f"run info must be a dict, got {type(info).__name__}")
    folder = catalogue.existing_run_dir(run_id)
    with journal.pending(catalogue, run_id):
        doc = read_optional(catalogue, folder / layout.RUN_INFO) or {}
        doc.update(json_plain(dict(info)))
        write_json_atomic(folder / layout.RUN_INFO, doc)
