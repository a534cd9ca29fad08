"""spherescope store: the run catalogue and the store's housekeeping.

spherescope store rebuild-index          rebuild the catalogue from the run folders
spherescope store archive RUN_ID...      hide runs from the default listings
spherescope store unarchive RUN_ID...
spherescope store delete RUN_ID...       move runs to the trash
spherescope store gc [--dry-run]         free checkpoints beyond each run's policy
                                         (training.keep_checkpoints) and the trash
"""

from __future__ import annotations

import argparse
import sys

from worker.commands.parsing import subcommand


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def run(args: argparse.Namespace) -> int:
    from db.catalogue import manage
    from db.store import RunStore

    store = RunStore()
    try:
        if args.action == "rebuild-index":
            count = manage.rebuild_index(store)
            print(f"catalogue rebuilt from {store.runs_dir}: {count} runs")
        elif args.action in ("archive", "unarchive"):
            ids = manage.archive(store, args.run_ids, archived=args.action == "archive")
            print(f"{args.action}d {len(ids)} run(s)")
        elif args.action == "delete":
            ids = manage.delete(store, args.run_ids)
            print(f"moved {len(ids)} run(s) to the trash ({store.home / 'trash'}); "
                  "`spherescope store gc` frees it")  # fmt: skip
        else:
            report = manage.gc(store, dry_run=args.dry_run)
            verb = "would free" if args.dry_run else "freed"
            for run_id, path, size in report.checkpoints:
                print(f"{run_id}: {path.name} ({_size(size)}) beyond its retention policy")
            for path, size in report.trash:
                print(f"trash: {path.name} ({_size(size)})")
            print(f"{verb} {_size(report.total_bytes)}: {len(report.checkpoints)} "
                  f"checkpoint(s), {len(report.trash)} trashed run(s)")  # fmt: skip
    except ValueError as error:
        print(f"spherescope store {args.action}: {error}", file=sys.stderr)
        return 2
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    store = subcommand(
        commands,
        "store",
        "the run catalogue and housekeeping: rebuild-index, archive, unarchive, delete, gc",
        run,
        __doc__.split("\n\n", 1)[1],
    )
    actions = store.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("rebuild-index", help="rebuild the run catalogue from the run folders")
    for name, what in (
        ("archive", "hide runs from the default listings (still searchable)"),
        ("unarchive", "show archived runs again"),
        ("delete", "move runs to the trash (gc frees it)"),
    ):
        action = actions.add_parser(name, help=what)
        action.add_argument("run_ids", nargs="+", metavar="RUN_ID")
    gc = actions.add_parser("gc", help="free checkpoints beyond each run's policy; empty the trash")
    gc.add_argument("--dry-run", action="store_true", help="only report what would be freed")
