"""spherescope train: one config trained in this process."""

from __future__ import annotations

import argparse

from worker.commands.parsing import add_overrides, subcommand, tag_list


def run(args: argparse.Namespace) -> int:
    from worker.local_run import train_command

    return train_command(
        args.config, args.overrides, name=args.name, tags=tag_list(args.tags), as_json=args.json,
        project=args.project,
    )  # fmt: skip


def register(commands: argparse._SubParsersAction) -> None:
    train = subcommand(
        commands, "train", "train one config in this process, recorded in the store", run
    )
    train.add_argument("config", help="TOML run config")
    add_overrides(train)
    train.add_argument("--name", default=None, help="run name (default: the config file's name)")
    train.add_argument(
        "--tags",
        default="",
        metavar="TAG,TAG",
        help="comma-separated tags shown and filterable in the dashboard",
    )
    train.add_argument(
        "--project", default=None, help="the project the run belongs to (default: default)"
    )
    train.add_argument(
        "--json",
        action="store_true",
        help="print the result as one JSON object on stdout (progress stays on stderr)",
    )
