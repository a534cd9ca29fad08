"""spherescope reproduce / report: the declared paper experiments."""

from __future__ import annotations

import argparse

from worker.commands.parsing import add_overrides, subcommand


def run_reproduce(args: argparse.Namespace) -> int:
    from worker.reproduce import reproduce_command

    return reproduce_command(
        args.names, args.seeds, args.steps_scale, args.data_root, args.launch, args.overrides,
        args.variants,
    )  # fmt: skip


def run_report(args: argparse.Namespace) -> int:
    from worker.report import report_command

    return report_command(args.out, args.only)


def register(commands: argparse._SubParsersAction) -> None:
    reproduce = subcommand(
        commands, "reproduce", "run a declared paper experiment (or all)", run_reproduce
    )
    reproduce.add_argument("names", nargs="+", metavar="NAME", help="experiment(s), or all")
    reproduce.add_argument("--seeds", type=int, nargs="+", default=None, help="default: declared")
    reproduce.add_argument("--data-root", default=None, help="folder holding MNIST/ etc.")
    reproduce.add_argument("--steps-scale", type=float, default=1.0, help="x declared steps")
    add_overrides(reproduce, "data.batch_size=128")
    reproduce.add_argument("--variants", nargs="+", default=None, help="only these arms")
    where = reproduce.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="train here (default)")
    where.add_argument("--launch", action="store_true", help="enqueue on the workers")

    report = subcommand(
        commands, "report", "write the reproduction report from the run store", run_report
    )
    report.add_argument("--out", default=None, help="default docs/reproduction.md")
    report.add_argument("--only", nargs="+", default=None, metavar="NAME", help="experiments")
