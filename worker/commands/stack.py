"""spherescope up / worker / status: the stack and its workers."""

from __future__ import annotations

import argparse

from worker.commands.parsing import subcommand


def run_up(args: argparse.Namespace) -> int:
    from worker.stack import up

    return up(
        args.host, args.port, args.concurrency, with_app=not args.no_app,
        ingest_port=args.ingest_port,
    )  # fmt: skip


def run_worker(args: argparse.Namespace) -> int:
    from worker.stack import worker

    return worker(args.concurrency, cpu_only=args.cpu_only)


def run_status(args: argparse.Namespace) -> int:
    from worker.status import status_command

    return status_command(args.timeout)


def register(commands: argparse._SubParsersAction) -> None:
    up = subcommand(
        commands, "up", "start Redis (unless REDIS_URL), workers and the dashboard", run_up
    )
    up.add_argument("--port", type=int, default=8501, help="dashboard port (default 8501)")
    up.add_argument(
        "--host",
        default="127.0.0.1",
        help="dashboard address (default 127.0.0.1; 0.0.0.0 exposes it)",
    )
    up.add_argument("--concurrency", type=int, default=1, help="parallel runs of the CPU worker")
    up.add_argument("--no-app", action="store_true", help="start no dashboard")
    up.add_argument(
        "--ingest-port",
        type=int,
        default=0,
        help="port of the ingest service for remote writers (default: dashboard port + 1)",
    )

    worker = subcommand(commands, "worker", "start workers against REDIS_URL", run_worker)
    worker.add_argument(
        "--concurrency", type=int, default=1, help="parallel runs of the CPU worker"
    )
    worker.add_argument("--cpu-only", action="store_true", help="serve the cpu queue only")

    status = subcommand(commands, "status", "queues, live workers; marks lost runs", run_status)
    status.add_argument(
        "--timeout", type=float, default=1.0, help="seconds to wait for workers to answer"
    )
