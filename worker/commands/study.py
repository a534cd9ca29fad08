"""spherescope study run / resume / status / cancel / report: fair comparisons of
methods (studies searched with Optuna, see README "Comparing methods fairly")."""

from __future__ import annotations

import argparse
import json
import sys

from worker.commands.parsing import add_overrides, subcommand


def _home() -> str:
    from db.store import RunStore

    return str(RunStore().home)


def _fail(error: Exception) -> int:
    print(f"error: {error}", file=sys.stderr)
    return 2


def run_run(args: argparse.Namespace) -> int:
    from worker.slurm_options import slurm_request
    from worker.study import control
    from worker.study.launcher import slurm_request_dict
    from worker.study.spec import load_spec

    slurm = slurm_request_dict(slurm_request(args))
    try:
        spec = load_spec(args.study_file, args.overrides)
        study_id = control.create_study(_home(), spec, parallel=args.parallel, slurm=slurm)
    except ValueError as error:  # bad input (a missing broker too): one line, nothing queued
        return _fail(error)
    print(f"study {study_id} created", file=sys.stderr)
    if args.detach:
        pid = control.start_detached(_home(), study_id)
        print(f"coordinator started (pid {pid}); follow it with: "
              f"spherescope study status {study_id}", file=sys.stderr)  # fmt: skip
        print(json.dumps({"study_id": study_id}) if args.json else study_id, flush=True)
        return 0
    print(json.dumps({"study_id": study_id}) if args.json else study_id, flush=True)
    return _coordinate(study_id, args.json)


def _coordinate(study_id: str, as_json: bool, parallel: int | None = None) -> int:
    from worker.study import control
    from worker.study.lock import StudyAlreadyRunning

    try:
        progress = control.coordinate(_home(), study_id, parallel=parallel)
    except (ValueError, StudyAlreadyRunning) as error:
        return _fail(error)
    except KeyboardInterrupt:
        print(f"coordinator stopped; continue with: spherescope study resume {study_id}",
              file=sys.stderr)  # fmt: skip
        return 130
    status = control.study_status(_home(), study_id, progress.run_ids or None)
    print(control.as_json(status) if as_json else control.status_lines(status), flush=True)
    return 0 if progress.state == "finished" else 1


def run_resume(args: argparse.Namespace) -> int:
    return _coordinate(args.study_id, args.json, args.parallel)


def run_status(args: argparse.Namespace) -> int:
    from worker.study import control

    try:
        status = control.study_status(_home(), args.study_id)
    except ValueError as error:
        return _fail(error)
    print(control.as_json(status) if args.json else control.status_lines(status), flush=True)
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    from worker.study import control

    try:
        cancelled = control.cancel_study(_home(), args.study_id)
    except ValueError as error:
        return _fail(error)
    if args.json:
        print(json.dumps({"study_id": args.study_id, "cancelled_runs": cancelled}), flush=True)
    else:
        print(f"study {args.study_id} cancelled; {len(cancelled)} runs cancelled", flush=True)
    return 0


def run_report(args: argparse.Namespace) -> int:
    from worker.study.report import render
    from worker.study.results import study_results

    try:
        results = study_results(_home(), args.study_id)
    except ValueError as error:
        return _fail(error)
    fmt = "json" if args.json else args.format
    sys.stdout.write(render(results, fmt))
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    from sphere_engine.experiments.studies import STUDY_PRESETS
    from worker.slurm_options import add_slurm_options

    study = subcommand(commands, "study", "fair comparisons: studies searched with Optuna", None)
    actions = study.add_subparsers(dest="study_command", required=True, metavar="ACTION")

    run = subcommand(
        actions, "run", "check a study file, create the study and coordinate it", run_run
    )
    run.add_argument(
        "study_file", metavar="STUDY.toml",
        help="the study file, or a preset: " + ", ".join(STUDY_PRESETS),
    )  # fmt: skip
    add_overrides(run, "data.root=/data/CUB_200_2011")
    run.add_argument(
        "--parallel", type=int, default=1, metavar="N", help="runs in flight (default 1)"
    )
    run.add_argument("--detach", action="store_true", help="coordinate in a background process")
    run.add_argument("--json", action="store_true", help="print JSON")
    add_slurm_options(run)

    resume = subcommand(actions, "resume", "continue a study from its journal", run_resume)
    resume.add_argument("study_id", metavar="ID")
    resume.add_argument(
        "--parallel", type=int, default=None, metavar="N", help="change runs in flight"
    )
    resume.add_argument("--json", action="store_true", help="print JSON")

    status = subcommand(actions, "status", "trials per arm against the budget", run_status)
    status.add_argument("study_id", metavar="ID")
    status.add_argument("--json", action="store_true", help="print JSON")

    cancel = subcommand(actions, "cancel", "stop a study and cancel its running runs", run_cancel)
    cancel.add_argument("study_id", metavar="ID")
    cancel.add_argument("--json", action="store_true", help="print JSON")

    report = subcommand(actions, "report", "the result table of a study", run_report)
    report.add_argument("study_id", metavar="ID")
    report.add_argument("--format", choices=("md", "csv", "json"), default="md")
    report.add_argument("--json", action="store_true", help="same as --format json")
