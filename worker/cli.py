"""The spherescope command: each subcommand is a module of ``worker.commands``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from worker.commands import (
    analyze,
    embed,
    export,
    export_model,
    reproduction,
    stack,
    store,
    study,
    submit,
    train,
)
from worker.commands.help_text import DESCRIPTION, ENVIRONMENT

# The order of the help's command list.
COMMANDS = (train, submit, study, analyze, export, export_model, embed, stack, reproduction, store)


def package_version() -> str:
    try:
        return version("spherescope")
    except PackageNotFoundError:  # a source checkout that is not installed
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spherescope",
        description=DESCRIPTION,
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"spherescope {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
