"""A cheap check (one ``stat``) read at most every so often from a hot loop."""

from __future__ import annotations

import time
from collections.abc import Callable


def throttled(
    check: Callable[[], bool], interval: float, *, latch: bool = True
) -> Callable[[], bool]:
    """``check`` evaluated at most every ``interval`` seconds, the last answer returned
    in between. ``latch``: True once stays True (a cancel flag is never taken back);
    without it the answer follows the check (a run's watched marker expires)."""
    state = {"at": float("-inf"), "value": False}

    def wrapped() -> bool:
        now = time.monotonic()
        if not (latch and state["value"]) and now - state["at"] >= interval:
            state["at"], state["value"] = now, bool(check())
        return bool(state["value"])

    return wrapped
