"""spherescope sync: send what runs recorded through SPHERESCOPE_URL left in this
machine's spool (their end came while the stack could not be reached)."""

from __future__ import annotations

import argparse
import sys

from worker.commands.parsing import subcommand


def run(args: argparse.Namespace) -> int:
    from db.remote import URL_ENV, writer_store
    from db.remote.client import IngestRefused
    from db.remote.store import RemoteStore

    try:
        store = writer_store()
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not isinstance(store, RemoteStore):
        print(f"error: {URL_ENV} is not set: nothing to send to", file=sys.stderr)
        return 2
    try:
        left = store.send_leftovers(args.wait)
    except IngestRefused as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for run_id, unsent in left.items():
        print(f"run {run_id}: " + (f"{unsent} batch(es) still unsent" if unsent else "sent"))
    return 1 if any(left.values()) else 0


def register(commands: argparse._SubParsersAction) -> None:
    sync = subcommand(
        commands,
        "sync",
        "send runs this machine still holds in its spool to the stack (SPHERESCOPE_URL)",
        run,
    )
    sync.add_argument(
        "--wait", type=float, default=60.0, help="seconds to wait per run (default 60)"
    )
