"""Execution: Celery workers, launching and cancelling runs, the ``spherescope`` CLI."""

from worker.submit import cancel, launch, launch_sweep

__all__ = ["cancel", "launch", "launch_sweep"]
