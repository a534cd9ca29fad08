"""The spherescope command: train, analyze, export, up, worker, status."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

DESCRIPTION = """\
SphereScope: embedding-geometry diagnostics for metric learning and face recognition.
Train a config in this process, analyze saved embeddings, export a run, or start the
stack (Redis, workers, dashboard)."""

ENVIRONMENT = """\
where runs are stored:
  every run (trained here, by a worker, or by the Python SDK) is a folder in the run
  store: SPHERESCOPE_HOME, default ./spherescope-data in the current directory.

environment variables:
  SPHERESCOPE_HOME               root of the run store (default ./spherescope-data)
  REDIS_URL                      Celery broker; unset: the private Redis started by
                                 "spherescope up" on this store
  SPHERESCOPE_TOKEN              password of a dashboard that listens beyond
                                 127.0.0.1 (up --host 0.0.0.0 requires it)
  SPHERESCOPE_HEARTBEAT_S        seconds between heartbeats of a running run (2)
  SPHERESCOPE_LOST_AFTER_S       a run silent this long is marked lost (15)
  SPHERESCOPE_REAPER_S           seconds between two lost-run checks of a worker (5)
  SPHERESCOPE_TASK_TIME_LIMIT_S  hard time limit of one worker task (172800)
  SPHERESCOPE_RECONCILE_S        seconds between two checks for queued runs the broker
                                 lost (30); they are sent again
  SPHERESCOPE_REQUEUE_AFTER_S    a queued run the broker does not hold is sent again
                                 after this long (60)
  SPHERESCOPE_WORKER_DEVICES     devices a worker advertises for training.devices
                                 (default: the GPUs it sees, else its CPU cores)"""

ANALYZE_FORMATS = """\
accepted embeddings files (by suffix):
  .npz      arrays "embeddings" (N x d) and "labels" (N)
  .npy      the N x d embeddings; labels in a sibling file: X.npy with X_labels.npy,
            or embeddings.npy with labels.npy
  .parquet  one label column, "label" or "labels", and the coordinates as one
  .csv      list column "embedding" (in a CSV as text such as [0.1, 0.2]), or the
            columns c0, c1, ... when present, or else all other columns (numeric)
labels are integer class ids or class names (strings, mapped to ids in sorted order)."""

EXPORT_FORMATS = """\
formats:
  csv, parquet  three files in DIR: RUN_ID-scalars, RUN_ID-evals, RUN_ID-norms
  tensorboard   event files in DIR/RUN_ID, for: tensorboard --logdir DIR
                (needs the tensorboard package: pip install "spherescope[tensorboard]")"""


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


def package_version() -> str:
    try:
        return version("spherescope")
    except PackageNotFoundError:  # a source checkout that is not installed
        return "0+unknown"


def _command(
    commands: argparse._SubParsersAction, name: str, summary: str, epilog: str = ENVIRONMENT
) -> argparse.ArgumentParser:
    """A subcommand whose help keeps the layout of ``epilog`` (plain text, no markup)."""
    return commands.add_parser(
        name,
        help=summary,
        description=summary,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_train(commands: argparse._SubParsersAction) -> None:
    train = _command(commands, "train", "train one config in this process, recorded in the store")
    train.add_argument("config", help="TOML run config")
    train.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting, e.g. optimizer.lr=0.01 (repeatable)",
    )
    train.add_argument("--name", default=None, help="run name (default: the config file's name)")
    train.add_argument(
        "--tags",
        default="",
        metavar="TAG,TAG",
        help="comma-separated tags shown and filterable in the dashboard",
    )
    train.add_argument(
        "--json",
        action="store_true",
        help="print the result as one JSON object on stdout (progress stays on stderr)",
    )


def _add_submit(commands: argparse._SubParsersAction) -> None:
    from worker.slurm_options import add_slurm_options

    submit = _command(
        commands, "submit", "queue one config for the workers, or as a SLURM job (--slurm)"
    )
    submit.add_argument("config", help="TOML run config")
    submit.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override a setting, e.g. optimizer.lr=0.01 (repeatable)",
    )  # fmt: skip
    submit.add_argument("--name", default=None, help="run name (default: the config file's name)")
    submit.add_argument("--tags", default="", metavar="TAG,TAG", help="comma-separated tags")
    submit.add_argument("--json", action="store_true", help='print {"run_id": ...} last')
    add_slurm_options(submit)

    cancel = _command(commands, "cancel", "cancel a queued or running run (workers or SLURM)")
    cancel.add_argument("run_id", metavar="RUN_ID", help="the run's id")


def _add_analyze(commands: argparse._SubParsersAction) -> None:
    analyze = _command(
        commands,
        "analyze",
        "diagnostics of a saved embeddings file, recorded as an analysis run",
        ANALYZE_FORMATS + "\n\n" + ENVIRONMENT,
    )
    analyze.add_argument(
        "path", nargs="?", default=None, help="embeddings file: .npz, .npy, .parquet or .csv"
    )
    analyze.add_argument(
        "--out", default=None, help="write the metrics here as JSON (default: PATH.metrics.json)"
    )
    analyze.add_argument(
        "--query", default=None, help="query embeddings file (with --gallery, instead of PATH)"
    )
    analyze.add_argument("--gallery", default=None, help="gallery embeddings file")
    analyze.add_argument("--ks", type=_ks, default=None, help="Recall@K values, e.g. 1,10,20,30")
    analyze.add_argument(
        "--knn-backend",
        default="auto",
        help="neighbour search / k-means: auto (default), faiss-gpu, torch-cuda, faiss, torch",
    )
    _add_face_protocols(analyze)


def _add_face_protocols(analyze: argparse.ArgumentParser) -> None:
    """Face protocols: PATH is then an .npz of embeddings keyed by image id."""
    face = analyze.add_argument_group("face protocols (PATH: .npz with embeddings, ids)")
    face.add_argument("--pairs", default=None, help="pairs list: LFW pairs.txt or 'a b same'")
    face.add_argument("--templates", default=None, help="IJB template-media list (tid_mid)")
    face.add_argument("--matches", default=None, help="IJB template pairs (1:1, a b label)")
    face.add_argument("--probes", default=None, help="IJB 1:N probe CSV (TEMPLATE_ID,SUBJECT_ID)")
    face.add_argument("--enrolled", default=None, help="IJB 1:N gallery CSV (same columns)")
    face.add_argument("--distractors", default=None, help="1:N distractor images (.npz, ids)")
    face.add_argument("--flip-sum", action="store_true", help="add flipped-image embeddings")


def _add_export(commands: argparse._SubParsersAction) -> None:
    export = _command(
        commands,
        "export",
        "write a run's logged values as CSV, Parquet or TensorBoard event files",
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


def _add_stack(commands: argparse._SubParsersAction) -> None:
    up = _command(commands, "up", "start Redis (unless REDIS_URL), workers and the dashboard")
    up.add_argument("--port", type=int, default=8501, help="dashboard port (default 8501)")
    up.add_argument(
        "--host",
        default="127.0.0.1",
        help="dashboard address (default 127.0.0.1; 0.0.0.0 exposes it)",
    )
    up.add_argument("--concurrency", type=int, default=1, help="parallel runs of the CPU worker")
    up.add_argument("--no-app", action="store_true", help="start no dashboard")

    worker = _command(commands, "worker", "start workers against REDIS_URL")
    worker.add_argument(
        "--concurrency", type=int, default=1, help="parallel runs of the CPU worker"
    )
    worker.add_argument("--cpu-only", action="store_true", help="serve the cpu queue only")

    status = _command(commands, "status", "queues, live workers; marks lost runs")
    status.add_argument(
        "--timeout", type=float, default=1.0, help="seconds to wait for workers to answer"
    )


def _add_reproduction(commands: argparse._SubParsersAction) -> None:
    reproduce = _command(commands, "reproduce", "run a declared paper experiment (or all)")
    reproduce.add_argument("names", nargs="+", metavar="NAME", help="experiment(s), or all")
    reproduce.add_argument("--seeds", type=int, nargs="+", default=None, help="default: declared")
    reproduce.add_argument("--data-root", default=None, help="folder holding MNIST/ etc.")
    reproduce.add_argument("--steps-scale", type=float, default=1.0, help="x declared steps")
    reproduce.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override a setting of every run, e.g. data.batch_size=128",
    )  # fmt: skip
    reproduce.add_argument("--variants", nargs="+", default=None, help="only these arms")
    where = reproduce.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="train here (default)")
    where.add_argument("--launch", action="store_true", help="enqueue on the workers")

    report = _command(commands, "report", "write the reproduction report from the run store")
    report.add_argument("--out", default=None, help="default docs/reproduction.md")
    report.add_argument("--only", nargs="+", default=None, metavar="NAME", help="experiments")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spherescope",
        description=DESCRIPTION,
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"spherescope {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_train(commands)
    _add_submit(commands)
    _add_analyze(commands)
    _add_export(commands)
    _add_stack(commands)
    _add_reproduction(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "train":
        from worker.local_run import train_command

        tags = [tag.strip() for tag in args.tags.split(",") if tag.strip()]
        return train_command(
            args.config, args.overrides, name=args.name, tags=tags, as_json=args.json
        )
    if args.command == "submit":
        from worker.slurm_options import slurm_request
        from worker.submit_command import submit_command

        tags = [tag.strip() for tag in args.tags.split(",") if tag.strip()]
        return submit_command(
            args.config, args.overrides, name=args.name, tags=tags, as_json=args.json,
            slurm=slurm_request(args),
        )  # fmt: skip
    if args.command == "cancel":
        from worker.submit_command import cancel_command

        return cancel_command(args.run_id)
    if args.command == "analyze":
        from worker.face_analyze import FACE_OPTIONS, face_analyze_command
        from worker.local_run import analyze_command

        face = {key: getattr(args, key) for key in FACE_OPTIONS}
        if any(face.values()):
            return face_analyze_command(args.path, args.out, face | {"flip_sum": args.flip_sum})
        return analyze_command(
            args.path, args.out, query=args.query, gallery=args.gallery, ks=args.ks,
            knn_backend=args.knn_backend,
        )  # fmt: skip
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
    if args.command == "export":
        from worker.export import export_command

        return export_command(args.run_id, args.fmt, args.out)
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
