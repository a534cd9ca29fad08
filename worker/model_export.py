"""``spherescope export-model``: a run's embedding model to ONNX / TorchScript, checked.

The checkpoint is found through the run's recorded checkpoints (``last``, a step, or
``best``: the kept one at the evaluation with the best main metric, as
``training.keep_checkpoints`` keeps it); the export and its
check run in ``sphere_engine.export``; the result is recorded in the run's folder
(``db.model_exports``) whether it passed or not. A failed check keeps the file under
``<out>.failed`` and exits 1 with the numbers.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from db.store import RunStore

FAILED_SUFFIX = ".failed"


class MissingCheckpoint(ValueError):
    """The run has no checkpoint of the kind asked for (the message says which)."""


def config_hash(config: dict[str, Any]) -> str:
    """sha256 of the run's config as sorted JSON (first 16 hex digits)."""
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def find_checkpoint(store: RunStore, run_id: str, which: str) -> tuple[Path, int | None]:
    """(file, step) of the run's checkpoint ``which``: ``last``, ``best`` or a step."""
    from db import queries

    record = store.get_run(run_id)
    rows = queries.checkpoints(store, run_id)
    files = [(int(step), Path(path)) for step, path in zip(rows["step"], rows["path"], strict=True)]
    files = [(step, path) for step, path in files if path.is_file()]
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
    store: RunStore, run_id: str, config: dict[str, Any], files: list[tuple[int, Path]]
) -> tuple[Path, int]:
    """The kept checkpoint at the evaluation with the best main metric (the one
    ``training.keep_checkpoints`` keeps as "best")."""
    from db import queries
    from sphere_engine.catalogue import main_metric

    policy = str((config.get("training") or {}).get("keep_checkpoints", "all"))
    if policy == "last":
        raise MissingCheckpoint(
            f'run {run_id} kept no best checkpoint (training.keep_checkpoints = "last"); '
            "use --checkpoint last or a step"
        )
    evaluations = queries.eval_series(store, run_id)
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


def final_evaluation(store: RunStore, run_id: str) -> dict[str, float]:
    """The metrics of the run's last evaluation (name → value)."""
    from db import queries

    frame = queries.eval_series(store, run_id)
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
) -> int:
    """Export, check, record; print the numbers. 0 when the check passed."""
    from sphere_engine.config import RunConfig
    from sphere_engine.export.run_model import export_and_check
    from sphere_engine.training.checkpoint import load_checkpoint

    store = RunStore()
    try:
        record = store.get_run(run_id)
        path, step = find_checkpoint(store, run_id, checkpoint)
    except ValueError as error:
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
    check = export_and_check(
        config, state, target, fmt, metadata, sorted(final),
        normalize=normalize, fp16=fp16, opset=opset,
    )  # fmt: skip
    kept = target
    if not check.passed:
        kept = target.with_name(target.name + FAILED_SUFFIX)
        target.replace(kept)
    entry = metadata | {
        "file": str(kept.resolve()),
        "normalized": normalize,
        "weights": "fp16 (fp32 compute on CPU)" if fp16 else "fp32",
        "opset": opset if fmt == "onnx" else None,
        "created_at": started,
        "check": check.as_record(),
    }
    from db.model_exports import record_model_export

    record_model_export(store.files, run_id, entry)
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
