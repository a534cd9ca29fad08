"""``spherescope export-model``: a run's embedding model to ONNX / TorchScript, checked.

The checkpoint is found through the run's recorded checkpoints (``last``, a step, or
``best``: the kept one at the evaluation with the best main metric, as
``training.keep_checkpoints`` keeps it); the export and its
check run in ``sphere_engine.export``; the result is recorded in the run's folder
(``db.model_exports``) whether it passed or not. A failed check keeps the file under
``<out>.failed`` and exits 1 with the numbers.

With ``SPHERESCOPE_URL`` (``db.remote``) the run's record, checkpoints and evaluations
are read from the stack's store and the export is recorded there, through the ingest
service; the checkpoint files are read here, on the machine that trained the run.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from db.remote import writer_store
from db.remote.client import IngestRefused, IngestUnreachable
from db.remote.store import RemoteStore
from db.store import RunStore
from db.writer_store import WriterStore

if TYPE_CHECKING:
    import pandas as pd

FAILED_SUFFIX = ".failed"


class MissingCheckpoint(ValueError):
    """The run has no checkpoint of the kind asked for (the message says which)."""


def config_hash(config: dict[str, Any]) -> str:
    """sha256 of the run's config as sorted JSON (first 16 hex digits)."""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# The reads and the record below are the one place that tells the two stores apart:
# a ``RemoteStore`` asks the ingest service, a ``RunStore`` reads its own folder.
def recorded_checkpoints(store: WriterStore, run_id: str) -> list[tuple[int, Path]]:
    """The run's recorded checkpoints as (step, file), in step order."""
    if isinstance(store, RemoteStore):
        rows = store.checkpoints(run_id)
    else:
        from db import queries

        frame = queries.checkpoints(_local(store), run_id)
        rows = list(zip(frame["step"], frame["path"], strict=True))
    return [(int(step), Path(path)) for step, path in rows]


def recorded_evaluations(store: WriterStore, run_id: str) -> pd.DataFrame:
    """The run's evaluation metrics: columns step, name, value."""
    import pandas as pd

    if isinstance(store, RemoteStore):
        return pd.DataFrame(store.evaluations(run_id), columns=["step", "name", "value"])
    from db import queries

    return queries.eval_series(_local(store), run_id)[["step", "name", "value"]]


def record_export(store: WriterStore, run_id: str, entry: dict[str, Any]) -> None:
    """Append ``entry`` to the run's model exports (``db.model_exports``)."""
    if isinstance(store, RemoteStore):
        store.record_model_export(run_id, entry)
        return
    from db.model_exports import record_model_export

    record_model_export(_local(store).files, run_id, entry)


def _local(store: WriterStore) -> RunStore:
    if not isinstance(store, RunStore):
        raise TypeError(f"{store!r} is neither a RunStore nor a RemoteStore")
    return store


def find_checkpoint(store: WriterStore, run_id: str, which: str) -> tuple[Path, int | None]:
    """(file, step) of the run's checkpoint ``which``: ``last``, ``best`` or a step."""
    record = store.get_run(run_id)
    files = [(step, path) for step, path in recorded_checkpoints(store, run_id) if path.is_file()]
    if which == "best":
        return _best_checkpoint(store, run_id, record.config, files)
    if not files:
        where = (
            "an SDK run logs no checkpoints"
            if record.kind != "train"
            else ("training.checkpoint_every was 0 and no checkpoint was written")
        )
        raise MissingCheckpoint(f"run {run_id} has no checkpoint file here ({where})")
    if which == "last":
        step, path = max(files)
        return path, step
    wanted = int(which)
    for step, path in files:
        if step == wanted:
            return path, step
    steps = ", ".join(str(step) for step, _ in sorted(files))
    raise MissingCheckpoint(f"run {run_id} has no checkpoint at step {wanted} (steps: {steps})")


def _best_checkpoint(
    store: WriterStore, run_id: str, config: dict[str, Any], files: list[tuple[int, Path]]
) -> tuple[Path, int]:
    """The kept checkpoint at the evaluation with the best main metric (the one
    ``training.keep_checkpoints`` keeps as "best")."""
    from sphere_engine.catalogue import main_metric

    policy = str((config.get("training") or {}).get("keep_checkpoints", "all"))
    if policy == "last":
        raise MissingCheckpoint(
            f'run {run_id} kept no best checkpoint (training.keep_checkpoints = "last"); '
            "use --checkpoint last or a step"
        )
    evaluations = recorded_evaluations(store, run_id)
    metric = main_metric(set(evaluations["name"]))
    scores = evaluations[evaluations["name"] == metric].set_index("step")["value"]
    scored = [(float(scores[step]), step, path) for step, path in files if step in scores.index]
    scored = [entry for entry in scored if entry[0] == entry[0]]  # NaN is never best
    if not scored:
        raise MissingCheckpoint(
            f"run {run_id} kept no best checkpoint (no checkpoint at an evaluated step"
            f"{f' of {metric}' if metric else ''}); use --checkpoint last or a step"
        )
    _, step, path = max(scored)
    return path, step


def final_evaluation(store: WriterStore, run_id: str) -> dict[str, float]:
    """The metrics of the run's last evaluation (name → value)."""
    frame = recorded_evaluations(store, run_id)
    if frame.empty:
        return {}
    last = frame[frame["step"] == frame["step"].max()]
    return dict(zip(last["name"], last["value"].astype(float), strict=True))


def export_model_command(
    run_id: str,
    fmt: str,
    out: str,
    checkpoint: str = "last",
    *,
    fp16: bool = False,
    opset: int = 18,
    normalize: bool = False,
    check_data: str | None = None,
) -> int:
    """Export, check, record; print the numbers. 0 when the check passed."""
    from sphere_engine.config import RunConfig
    from sphere_engine.export.run_model import export_and_check
    from sphere_engine.training.checkpoint import load_checkpoint

    try:
        store = writer_store()
        record = store.get_run(run_id)
        path, step = find_checkpoint(store, run_id, checkpoint)
    except (ValueError, IngestRefused, IngestUnreachable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    state = load_checkpoint(path)
    config = RunConfig.from_dict(state.get("config") or record.config)
    step = state.get("step", step)
    final = final_evaluation(store, run_id)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    metadata = {
        "run_id": run_id,
        "checkpoint": str(path),
        "step": step,
        "config_hash": config_hash(config.to_dict()),
        "format": fmt,
    }
    if fp16:
        print("fp16: weights rounded to fp16, computed in fp32 on this CPU", file=sys.stderr)
    started = time.time()
    try:
        check = export_and_check(
            config, state, target, fmt, metadata, sorted(final),
            normalize=normalize, fp16=fp16, opset=opset, check_data=check_data,
        )  # fmt: skip
    except ValueError as error:  # check data the model cannot take
        print(f"error: {error}", file=sys.stderr)
        target.unlink(missing_ok=True)
        return 2
    kept = target
    if not check.passed:
        kept = target.with_name(target.name + FAILED_SUFFIX)
        target.replace(kept)
    entry = metadata | {
        "file": str(kept.resolve()),
        "normalized": normalize,
        "weights": "fp16 (fp32 compute on CPU)" if fp16 else "fp32",
        "opset": opset if fmt == "onnx" else None,
        "check_data": check_data or "the run's evaluated test samples",
        "created_at": started,
        "check": check.as_record(),
    }
    try:
        record_export(store, run_id, entry)
    except IngestRefused as error:  # the stack no longer takes it (its token changed)
        print(f"error: {kept} written but not recorded: {error}", file=sys.stderr)
        return 2
    print(f"exported run {run_id} step {step} ({fmt}) to {kept}")
    print(f"check: {check.summary()}")
    if fp16:
        name, gap = check.worst_metric
        print(
            f"fp16 drop: max(1 - cos) {check.max_one_minus_cos:.3g}; metrics {gap * 100:.4f} "
            f"points at most ({name or 'none'})"
        )
    if not check.passed:
        print(f"error: the check failed; the file is kept as {kept}", file=sys.stderr)
        return 1
    return 0
