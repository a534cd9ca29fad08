"""The stack's children end with it, even when it is killed outright.

``spherescope up`` stops its private Redis, workers and dashboard when it is stopped
(Ctrl-C, SIGTERM). Killed with SIGKILL (the OOM killer, ``kill -9``, a CI timeout) it
cannot, and its children would live on as orphans: a password-protected Redis and
its data folder in the temporary directory, workers, a dashboard holding the port.
On Linux the kernel sends each child SIGTERM when the process that started it dies
(``PR_SET_PDEATHSIG``), so they take their own orderly exit: Redis stops, a worker
lets its runs finish into the store and exits, the dashboard exits. Elsewhere nothing
changes.

The signal follows the *thread* that started the child: children are started from the
stack's main thread, which lives as long as the stack.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()  # resolved before any fork: the child only calls it


def end_with_this_process() -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess.Popen`` that makes the child receive SIGTERM
    when the calling process dies; None where the platform cannot."""
    if _PRCTL is None:
        return None
    parent = os.getpid()
    prctl = _PRCTL

    def in_child() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
        if os.getppid() != parent:  # the parent died before the line above took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return in_child
