"""Execution: Celery workers, launching and cancelling runs, the ``spherescope`` CLI."""

from worker.submit import (
    cancel,
    check_sweep,
    gpu_worker_alive,
    launch,
    launch_many,
    launch_sweep,
)

__all__ = ["cancel", "check_sweep", "gpu_worker_alive", "launch", "launch_many", "launch_sweep"]
