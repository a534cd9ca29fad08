"""The ``--slurm`` options of ``spherescope submit``, declared once and read back as a
``SlurmRequest`` (None without ``--slurm``). Torch- and submitit-free: the CLI's help
never imports either."""

from __future__ import annotations

import argparse

from worker.slurm.request import DEFAULT_TIME_MIN, SlurmRequest

SLURM_HELP = """\
run as a SLURM job (through submitit) instead of on the workers; the run store
(SPHERESCOPE_HOME) must be on a filesystem the compute nodes share"""


def add_slurm_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("SLURM", SLURM_HELP)
    group.add_argument("--slurm", action="store_true", help="submit as a SLURM job")
    group.add_argument("--partition", default=None, help="partition (default: the cluster's)")
    group.add_argument(
        "--time", dest="time_min", type=int, default=None, metavar="MINUTES",
        help=f"time limit in minutes (default: the partition's, at most {DEFAULT_TIME_MIN})",
    )  # fmt: skip
    group.add_argument("--gpus", type=int, default=0, help="GPUs per node (default 0)")
    group.add_argument("--nodes", type=int, default=1, help="nodes (default 1)")
    group.add_argument("--cpus-per-task", type=int, default=None, help="CPUs of the task")
    group.add_argument("--mem", dest="mem_gb", type=float, default=None, metavar="GB",
                       help="memory per node in GB")  # fmt: skip
    group.add_argument("--account", default=None, help="account to charge")
    group.add_argument("--qos", default=None, help="quality of service")
    group.add_argument("--constraint", default=None, help="node features, e.g. a100")


SLURM_ONLY = ("partition", "gpus", "cpus_per_task", "mem_gb", "account", "qos", "constraint")


def slurm_request(args: argparse.Namespace) -> SlurmRequest | None:
    """The request the options describe; ``argparse`` exits with a one-line error for a
    bad value, or for SLURM options given without ``--slurm``."""
    given = [name for name in SLURM_ONLY if getattr(args, name) not in (None, 0)]
    if not args.slurm:
        if given or args.time_min is not None or args.nodes != 1:
            option = "--" + (given[0] if given else "time").replace("_", "-")
            raise SystemExit(f"error: {option} is a SLURM option: add --slurm")
        return None
    try:
        return SlurmRequest(
            **{name: getattr(args, name) for name in (*SLURM_ONLY, "time_min", "nodes")}
        )
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None
