"""The evaluations of SCIENCE.md §7 on a page: verification, then robustness."""

from __future__ import annotations

from collections.abc import Sequence

from app.panels import robustness, verification


def show(run_ids: Sequence[str], labels: dict[str, str] | None = None) -> None:
    """Each panel draws itself only when the runs logged its metrics."""
    verification.show(run_ids, labels)
    robustness.show(run_ids, labels)
