"""spherescope submit / cancel: runs for the workers or SLURM."""

from __future__ import annotations

import argparse

from worker.commands.parsing import add_overrides, subcommand, tag_list


def run_submit(args: argparse.Namespace) -> int:
    from worker.slurm_options import slurm_request
    from worker.submit_command import submit_command

    return submit_command(
        args.config, args.overrides, name=args.name, tags=tag_list(args.tags), as_json=args.json,
        slurm=slurm_request(args), project=args.project,
    )  # fmt: skip


def run_cancel(args: argparse.Namespace) -> int:
    from worker.submit_command import cancel_command

    return cancel_command(args.run_id)


def register(commands: argparse._SubParsersAction) -> None:
    from worker.slurm_options import add_slurm_options

    submit = subcommand(
        commands, "submit", "queue one config for the workers, or as a SLURM job (--slurm)",
        run_submit,
    )  # fmt: skip
    submit.add_argument("config", help="TOML run config")
    add_overrides(submit)
    submit.add_argument("--name", default=None, help="run name (default: the config file's name)")
    submit.add_argument("--tags", default="", metavar="TAG,TAG", help="comma-separated tags")
    submit.add_argument(
        "--project", default=None, help="the project the run belongs to (default: default)"
    )
    submit.add_argument("--json", action="store_true", help='print {"run_id": ...} last')
    add_slurm_options(submit)

    cancel = subcommand(
        commands, "cancel", "cancel a queued or running run (workers or SLURM)", run_cancel
    )
    cancel.add_argument("run_id", metavar="RUN_ID", help="the run's id")
