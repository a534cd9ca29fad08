"""Execution: Celery workers, launching and cancelling runs, the ``spherescope`` CLI.

The launch functions are ``worker.submit``'s, imported on first use: importing a
submodule (the CLI's ``worker.cli``, above all) must not import Celery and Redis.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cancel", "check_sweep", "gpu_worker_alive", "launch", "launch_many", "launch_sweep"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from worker import submit

        return getattr(submit, name)
    raise AttributeError(f"module 'worker' has no attribute {name!r}")
