"""Which checkpoints a run keeps: ``training.keep_checkpoints``, declared once, torch-free.

A policy is ``last``, ``best`` (by the run's main metric, ``main_metric``), ``last+best``
(the default), ``all``, or a number N (the last N). Training applies it after each
checkpoint and evaluation (``sphere_engine.training.checkpoint.CheckpointRetention``);
``spherescope store gc`` applies it to the runs' folders.

A checkpoint's score is the main metric of the evaluation at its step (checkpoints
without one are never "best"). A checkpoint newer than the last evaluation may still get
its score, so none is removed before its step has been evaluated past.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

DEFAULT_POLICY = "last+best"
POLICIES = ("last", "best", "last+best", "all")
_STEP_FILE = re.compile(r"^step_(\d+)\.pt$")


def policy_problem(policy: object) -> str | None:
    """Why ``policy`` is not a retention policy, or None when it is one."""
    text = str(policy).strip() if isinstance(policy, (str, int)) else ""
    if text in POLICIES or (text.isdigit() and int(text) >= 1):
        return None
    return f"{policy!r} is not one of {', '.join(POLICIES)} or a number of last checkpoints >= 1"


def check_policy(policy: object) -> str:
    """The policy, or ``ValueError`` naming ``training.keep_checkpoints``."""
    problem = policy_problem(policy)
    if problem is not None:
        raise ValueError(f"training.keep_checkpoints: {problem}")
    return str(policy).strip()


def checkpoint_step(name: str) -> int | None:
    """The step of a checkpoint file name (``step_00000100.pt``), None for other files."""
    match = _STEP_FILE.match(name)
    return int(match.group(1)) if match else None


def kept_steps(
    policy: str,
    steps: Iterable[int],
    scores: Mapping[int, float],
    evaluated_up_to: int | None = None,
    *,
    finished: bool = False,
) -> set[int]:
    """The checkpoint steps the policy keeps among ``steps``. ``scores``: step → main
    metric at that step (higher is better). Until ``finished``, checkpoints after
    ``evaluated_up_to`` are kept too (their evaluation may be on its way)."""
    policy = check_policy(policy)
    ordered = sorted(set(steps))
    if not ordered or policy == "all":
        return set(ordered)
    keep: set[int] = set()
    if policy.isdigit():
        keep.update(ordered[-int(policy) :])
    if policy in ("last", "last+best"):
        keep.add(ordered[-1])
    if policy in ("best", "last+best"):
        scored = [s for s in ordered if s in scores and scores[s] == scores[s]]
        if scored:
            keep.add(max(scored, key=lambda s: (scores[s], s)))
        elif policy == "best":
            keep.add(ordered[-1])  # nothing scored: the last stands in for the best
    if not finished:
        horizon = -1 if evaluated_up_to is None else evaluated_up_to
        keep.update(s for s in ordered if s > horizon)
    return keep
