"""The Runs page's reads and bulk actions over the run catalogue (``db.catalogue``):
one page of runs answered server-side (search, filters, sort, paging), groups with
counts and mean ± std, disk usage, and archive / unarchive / tag / delete of many runs.
The browser receives one page of rows, never the whole store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from app.data import reads
from app.data.cache import LIST_TTL, store, store_read
from app.data.projects import sweep_ids, tag_names

if TYPE_CHECKING:
    from db.store import RunStore


@dataclass(frozen=True)
class RunFilters:
    """What the Runs page filters on (all server-side). ``archived``: False hides
    archived runs (the default view), None shows them too; ``config``: (dotted key,
    value) equality pairs (a group picked from a config-key grouping)."""

    project: str | None = None
    search: str = ""
    status: tuple[str, ...] = ()
    kind: str | None = None
    tag: str | None = None
    sweep_id: str | None = None
    study_id: str | None = None
    archived: bool | None = False
    config: tuple[tuple[str, str], ...] = field(default=())

    def as_query(self) -> dict[str, Any]:
        """Keyword arguments of ``db.catalogue.query`` (unset filters left out)."""
        query = {k: v for k, v in asdict(self).items() if k != "config"}
        query = {k: v for k, v in query.items() if v not in ("", None, ()) or k == "archived"}
        if self.config:
            query["config"] = dict(self.config)
        return query


@store_read(LIST_TTL)
def runs_page(
    store: RunStore,
    filters: RunFilters,
    *,
    sort: str = "created_at",
    descending: bool = True,
    untrusted_last: bool = False,
    offset: int = 0,
    limit: int = 50,
) -> tuple[pd.DataFrame, int]:
    """One page of the matching runs (``db.catalogue.query.runs_frame``'s columns) and
    how many matched in all."""
    from db.catalogue.query import runs_frame

    return runs_frame(
        store, limit=limit, offset=offset, sort=sort, descending=descending,
        untrusted_last=untrusted_last, **filters.as_query(),
    )  # fmt: skip


@store_read(LIST_TTL)
def run_groups(
    store: RunStore, filters: RunFilters, by: str, metric: str | None = None
) -> pd.DataFrame:
    """Groups of the matching runs: group, runs, mean, std (of ``metric``, default each
    run's main value). ``by``: sweep_id, study_id, tag or config.<dotted.key>."""
    from db.catalogue.query import group_runs

    return group_runs(store, by, metric=metric, **filters.as_query())


@store_read(LIST_TTL)
def disk_total(store: RunStore, project: str | None = None) -> int:
    """Bytes the runs (of ``project``) hold, archived ones included, trash excluded."""
    from db.catalogue.query import disk_usage

    return disk_usage(store, project)


@store_read(LIST_TTL)
def study_ids(store: RunStore, project: str | None = None) -> list[str]:
    """Study ids with at least one run (of ``project``), most runs first."""
    from db.catalogue.query import group_runs

    groups = group_runs(store, "study_id", project=project, archived=None)
    return [str(g) for g in groups["group"] if isinstance(g, str) and g]


#: A run picker offers at most this many runs (the newest with results, or the
#: newest matching its search), plus the runs picked or named by the link.
PICK_LIMIT = 50


@store_read(LIST_TTL)
def pick_options(
    store: RunStore, project: str | None, search: str = "", limit: int = PICK_LIMIT
) -> pd.DataFrame:
    """A run picker's options (``db.catalogue.query.PICK_COLUMNS``): without a search
    the newest runs of ``project`` with results first, then the other newest; with
    one, the newest runs whose name, id, tags, notes or config contain it (archived
    runs too: they stay findable)."""
    from db.catalogue.query import pick_list

    if search.strip():
        return pick_list(store, project=project, search=search.strip(), archived=None, limit=limit)
    return pick_list(store, project=project, results_first=True, limit=limit)


@store_read(LIST_TTL)
def runs_by_id(store: RunStore, run_ids: Sequence[str]) -> pd.DataFrame:
    """The runs of ``run_ids`` that exist (any project, archived or not), in the
    order asked (``PICK_COLUMNS``): what a link or a picker names."""
    from db.catalogue.query import pick_list

    if not run_ids:
        return pick_list(store, run_ids=[], limit=0)
    frame = pick_list(store, run_ids=list(run_ids), archived=None, limit=None)
    order = {run_id: index for index, run_id in enumerate(run_ids)}
    frame = frame.assign(_order=frame["run_id"].map(order)).sort_values("_order")
    return frame.drop(columns="_order").reset_index(drop=True)


@store_read(LIST_TTL)
def sweep_run_ids(store: RunStore, sweep_id: str) -> list[str]:
    """The (unarchived) runs of sweep ``sweep_id``, newest first."""
    from db.catalogue.query import pick_list

    return pick_list(store, sweep_id=sweep_id, limit=None)["run_id"].tolist()


@store_read(LIST_TTL)
def config_keys(store: RunStore, project: str | None = None) -> list[str]:
    """Every dotted config key of the runs of ``project`` (None: every project), those
    whose value differs between runs first: what the Runs page sorts and groups by."""
    from db.catalogue.query import config_keys as catalogue_keys

    return catalogue_keys(store, project)


def sweeps_and_studies(project: str | None) -> tuple[list[str], list[str]]:
    """The sweep ids and study ids to filter on."""
    return sweep_ids(project=project), study_ids(project=project)


def clear() -> None:
    """Forget every cached listing (after an action changed runs)."""
    for read in (
        runs_page, run_groups, disk_total, study_ids, tag_names, pick_options, runs_by_id,
        sweep_run_ids, config_keys,
    ):  # fmt: skip
        read.clear()
    for read in (reads.runs, reads.run, reads.latest_metrics, reads.final_metrics):
        read.clear()


def archive_runs(run_ids: Sequence[str], archived: bool = True) -> int:
    """Archive (or unarchive) the runs; how many. An unknown id changes nothing."""
    from db.catalogue.manage import archive

    changed = archive(store(), run_ids, archived)
    clear()
    return len(changed)


def delete_runs(run_ids: Sequence[str]) -> int:
    """Move the runs to the store's trash (``spherescope store gc`` frees it)."""
    from db.catalogue.manage import delete

    deleted = delete(store(), run_ids)
    clear()
    return len(deleted)


def add_tags(run_ids: Sequence[str], new_tags: Sequence[str]) -> int:
    """Add ``new_tags`` to each run's tags (kept once, in order); how many runs."""
    wanted = [t.strip() for t in new_tags if t.strip()]
    runs_store = store()
    for run_id in run_ids:
        current = runs_store.get_run(run_id).tags
        runs_store.set_tags(run_id, list(dict.fromkeys([*current, *wanted])))
    clear()
    return len(run_ids)
