"""Helpers shared by the subcommands' parsers."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from worker.commands.help_text import ENVIRONMENT

Handler = Callable[[argparse.Namespace], int]


def subcommand(
    commands: argparse._SubParsersAction,
    name: str,
    summary: str,
    handler: Handler,
    epilog: str = ENVIRONMENT,
) -> argparse.ArgumentParser:
    """A subcommand run by ``handler``, whose help keeps the layout of ``epilog``."""
    parser = commands.add_parser(
        name,
        help=summary,
        description=summary,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=handler)
    return parser


def add_overrides(parser: argparse.ArgumentParser, example: str = "optimizer.lr=0.01") -> None:
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help=f"override a setting, e.g. {example} (repeatable)",
    )  # fmt: skip


def tag_list(text: str) -> list[str]:
    """``"a, b,"`` → ["a", "b"]."""
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def ks(text: str) -> list[int]:
    """``"1,10,20"`` → [1, 10, 20] (each an integer ≥ 1)."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of integers"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: each K must be an integer >= 1")
    return values
