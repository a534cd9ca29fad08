"""How logged steps reach the tracker: finished K at a time, never lost."""

from __future__ import annotations

from sphere_engine.diagnostics.batched_finish import HostStep, PendingStatistics
from sphere_engine.tracking import Tracker


class StepReporter:
    """Logged steps wait here for their host finish, done K steps at once (the finished
    values only reach the store at the tracker's flush anyway)."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        self.pending = PendingStatistics()

    def add(
        self, step: int, host: HostStep, timing: dict[str, float], sample_ids: list[int]
    ) -> None:
        self.pending.add(step, host, timing, sample_ids)

    def due(self) -> bool:
        return self.pending.due()

    def report(self) -> None:
        """Finish every waiting step and hand it to the tracker."""
        for record in self.pending.finish():
            self.tracker.track_many(record.values, record.step, record.wall_time)
            if record.sample_ids:
                self.tracker.track_sample_norms(record.sample_ids, record.sample_norms, record.step)

    def divergence_message(self, step: int, loss: float) -> str:
        """Why the run stops at ``step``, with the last finite values reported."""
        self.report()  # every step before this one had a finite loss
        # the non-finite loss is logged at its step: the run's findings show where
        self.tracker.track(loss, "loss/total", step)
        last = self.pending.last
        return divergence_message(step, loss, last.values if last else {}, last and last.step)


def divergence_message(
    step: int, loss: float, last_finite: dict[str, float], last_finite_step: int | None
) -> str:
    shown = ("loss/total", "norm/mean", "norm/max", "grad/norm_mean", "lr")
    if last_finite_step is None:
        context = "no finite values were logged before it"
    else:
        values = ", ".join(f"{k}={last_finite[k]:.4g}" for k in shown if k in last_finite)
        context = f"last finite values (step {last_finite_step}): {values}"
    return (
        f"training diverged: the loss became {loss} at step {step}; {context}. "
        "Lower optimizer.lr, add warm-up, or check the loss options."
    )
