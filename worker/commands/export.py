"""spherescope export: a run's logged values as CSV, Parquet or TensorBoard files."""

from __future__ import annotations

import argparse

from worker.commands.help_text import ENVIRONMENT, EXPORT_FORMATS
from worker.commands.parsing import subcommand


def run(args: argparse.Namespace) -> int:
    from worker.export import export_command

    return export_command(args.run_id, args.fmt, args.out)


def register(commands: argparse._SubParsersAction) -> None:
    export = subcommand(
        commands,
        "export",
        "write a run's logged values as CSV, Parquet or TensorBoard event files",
        run,
        EXPORT_FORMATS + "\n\n" + ENVIRONMENT,
    )
    export.add_argument("run_id", metavar="RUN_ID", help="the run's id (see the dashboard)")
    export.add_argument(
        "--format",
        dest="fmt",
        choices=("csv", "parquet", "tensorboard"),
        default="csv",
        help="output format (default csv)",
    )
    export.add_argument("--out", default=".", metavar="DIR", help="output folder (default .)")
