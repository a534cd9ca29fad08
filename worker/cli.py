"""The ``spherescope`` command: train, analyze, up, worker, status."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _ks(text: str) -> list[int]:
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spherescope", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="train one config in this process")
    train.add_argument("config", help="TOML run config")
    train.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting, e.g. optimizer.lr=0.01",
    )

    analyze = commands.add_parser("analyze", help="diagnostics of a saved embeddings file")
    analyze.add_argument(
        "path", nargs="?", default=None, help="embeddings file (.npz, .npy, .csv, .parquet)"
    )
    analyze.add_argument("--out", default=None, help="write the report here (JSON)")
    analyze.add_argument("--query", default=None, help="query embeddings file (with --gallery)")
    analyze.add_argument("--gallery", default=None, help="gallery embeddings file")
    analyze.add_argument("--ks", type=_ks, default=None, help="Recall@K values, e.g. 1,10,20,30")

    up = commands.add_parser("up", help="start Redis (unless REDIS_URL), workers and the app")
    up.add_argument("--port", type=int, default=8501, help="dashboard port (default 8501)")
    up.add_argument(
        "--host",
        default="127.0.0.1",
        help="dashboard address (default 127.0.0.1; 0.0.0.0 exposes it)",
    )
    up.add_argument("--concurrency", type=int, default=1, help="parallel runs of the CPU worker")
    up.add_argument("--no-app", action="store_true", help="start no dashboard")

    worker = commands.add_parser("worker", help="start workers against REDIS_URL")
    worker.add_argument(
        "--concurrency", type=int, default=1, help="parallel runs of the CPU worker"
    )
    worker.add_argument("--cpu-only", action="store_true", help="serve the cpu queue only")

    status = commands.add_parser("status", help="queues, live workers; marks lost runs")
    status.add_argument(
        "--timeout", type=float, default=1.0, help="seconds to wait for workers to answer"
    )
    reproduce = commands.add_parser("reproduce", help="run a declared paper experiment")
    reproduce.add_argument("names", nargs="+", metavar="NAME", help="experiment(s), or all")
    reproduce.add_argument("--seeds", type=int, nargs="+", default=None, help="default: declared")
    reproduce.add_argument("--data-root", default=None, help="folder holding MNIST/ etc.")
    reproduce.add_argument("--steps-scale", type=float, default=1.0, help="× declared steps")
    reproduce.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override a setting of every run, e.g. data.batch_size=128",
    )  # fmt: skip
    reproduce.add_argument("--variants", nargs="+", default=None, help="only these arms")
    where = reproduce.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="train here (default)")
    where.add_argument("--launch", action="store_true", help="enqueue on the workers")

    report = commands.add_parser("report", help="write the reproduction report from the store")
    report.add_argument("--out", default=None, help="default docs/reproduction.md")
    report.add_argument("--only", nargs="+", default=None, metavar="NAME", help="experiments")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "train":
        from worker.local_run import train_command

        return train_command(args.config, args.overrides)
    if args.command == "analyze":
        from worker.local_run import analyze_command

        return analyze_command(
            args.path, args.out, query=args.query, gallery=args.gallery, ks=args.ks
        )
    if args.command == "reproduce":
        from worker.reproduce import reproduce_command

        return reproduce_command(
            args.names,
            args.seeds,
            args.steps_scale,
            args.data_root,
            args.launch,
            args.overrides,
            args.variants,
        )
    if args.command == "report":
        from worker.report import report_command

        return report_command(args.out, args.only)
    if args.command == "up":
        from worker.stack import up

        return up(args.host, args.port, args.concurrency, with_app=not args.no_app)
    if args.command == "worker":
        from worker.stack import worker

        return worker(args.concurrency, cpu_only=args.cpu_only)
    from worker.status import status_command

    return status_command(args.timeout)


if __name__ == "__main__":
    sys.exit(main())
