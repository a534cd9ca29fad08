"""Errors of the engine that other layers recognise by type.

This module imports nothing (no torch), so the run lifecycle in ``db.lifecycle`` can
match these with ``isinstance`` without loading the engine.
"""

from __future__ import annotations


class TrainingDivergedError(RuntimeError):
    """The loss became NaN or infinite. Its message is a complete sentence naming the
    step and the last finite values, so it is stored as the run's status message as is."""
