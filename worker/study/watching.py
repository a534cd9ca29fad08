"""Following one run of a study: its validation curve reported to the pruners as it
grows, its findings checked now and then (a critical one prunes the trial), and its end
handed on (a run interrupted by no fault of its setting is retried once; a trial's
fold goes to ``trials.py``)."""

from __future__ import annotations

import logging
import os
import time

from optuna.trial import Trial, TrialState

from db.records import RunRecord
from worker.shutdown import STOP_REASON
from worker.study import storage
from worker.study.curve import metric_points
from worker.study.pruning import critical_finding, curve_step
from worker.study.state import ENDED_WELL, CoordinatorState, Slot

log = logging.getLogger(__name__)

#: Where a run's worker stores its findings at its end (``db.findings.INFO_KEY``, not
#: imported: that module imports the rules and pandas)
FINDINGS_INFO_KEY = "findings"

#: A running trial's findings are read this often (a read of its whole series), or less
#: often when a read is dear: the next read waits at least its CPU cost / this share (a
#: long run's series grows, and on a busy machine a read took 0.7 s of CPU: every 10 s
#: that was most of what the coordinator spent). The wait uses the last live read's cost
#: of any run, the first read of a run included, and the coordinator's first live read
#: its imports. Its end is always read.
FINDINGS_EVERY_S = 10.0
FINDINGS_CPU_SHARE = 0.005  # of the study's 2 % budget for its coordinator
#: ... and only once the run has trained this share of its steps since the last read
#: (or its start): at most three live reads, however slowly it runs (on a busy machine
#: a run of seconds took a minute and was read every 10 s: the reads' CPU then was a
#: share of the wall clock's, several times the run's own). A quarter, not a half: a
#: run that diverges early is pruned by a quarter of its steps, not left to its middle.
FINDINGS_EVERY_PROGRESS = 0.25
LATE_EVALUATION_S = 2.0
#: A run's record is read again when its folder changed (the store replaces a file
#: there for every status, heartbeat or info it writes, which changes the folder's
#: mtime), or this long after the last read whatever the folder says (a change within
#: the same filesystem clock tick as the last look).
REREAD_EVERY_S = 2.0


def interrupted(record: RunRecord) -> bool:
    """Lost (its process died) or stopped by the stack's shutdown (``spherescope up``
    stopped; the next ``up`` resumes the study): the setting is not at fault, so its
    trial is not failed for it."""
    if record.status == "lost":
        return True
    return record.status == "cancelled" and record.status_message.startswith(STOP_REASON)


class RunWatcher(CoordinatorState):
    def _folder_changed(self, slot: Slot) -> bool:
        """Whether the run's record may have changed since it was last read: a stat,
        where reading the record is six files (a poll four times a second of a run that
        is only training cost the coordinator more CPU than everything else it did)."""
        try:
            mtime = os.stat(self.store.run_dir(slot.run_id)).st_mtime_ns
        except OSError:
            mtime = -1
        now = time.monotonic()
        if mtime == slot.folder_mtime_ns and now - slot.record_read_at < REREAD_EVERY_S:
            return False
        slot.folder_mtime_ns, slot.record_read_at = mtime, now
        return True

    def _follow(self, slot: Slot) -> None:
        if not self._folder_changed(slot):
            return
        record = self.store.get_run(slot.run_id)
        if slot.kind == "trial":
            # slots follow running trials only (a trial told pruned or failed leaves its
            # slot at once), so the journal is not read on every poll
            if slot.trial is None:
                slot.trial = self._trial(slot.arm, slot.number)
            if self._report_curve(slot, slot.trial, record):
                return
        if not record.is_terminal:
            return
        self.slots.pop(slot.run_id, None)
        if interrupted(record) and not slot.retried:
            log.info("study %s: run %s %s; retrying once", self.study_id, slot.run_id,
                     record.status_message or record.status)  # fmt: skip
            if slot.kind == "trial":
                self._launch_trial_fold(slot.arm, slot.number, slot.fold, retry=True)
            else:
                params = self.best_params(slot.arm) or {}
                self._launch_repro(slot.arm, slot.number, slot.fold, params, retry=True)
            return
        if slot.kind == "trial":
            self._trial_fold_ended(slot, record.status, record.status_message)
        elif record.status == ENDED_WELL:
            self.repro_finished.setdefault((slot.arm, slot.number), {})[slot.fold] = slot.run_id

    def _metric_points(self, run_id: str) -> list[tuple[int, float]]:
        return metric_points(self.store, run_id, self.spec.metric)

    def _report_curve(self, slot: Slot, trial: Trial, record: RunRecord) -> bool:
        """Report new validation points and check the pruners and the findings; True
        when the trial was pruned. Its evaluations are read only once its progress has
        passed another evaluation step (the heartbeat is cheap to read, a query is not)."""
        now = time.monotonic()
        ended = record.is_terminal
        every = int((record.config.get("diagnostics") or {}).get("eval_every", 1)) or 1
        passed = (record.progress_step or 0) // every
        # an evaluation is computed beside training: its value lands a little later
        late = slot.points_read < passed and now - slot.read_at >= LATE_EVALUATION_S
        if not ended and not self._median_active(slot.arm):
            late, passed = False, slot.evaluations_seen  # nothing to prune on yet: read at the end
        if ended or passed != slot.evaluations_seen or late:
            slot.evaluations_seen, slot.read_at = passed, now
            points = self._metric_points(slot.run_id)
            slot.points, slot.points_read = points, len(points)
            new = [(curve_step(slot.fold, s), v) for s, v in points if s > slot.reported_step]
            storage.report_values(trial, new)
            slot.reported_step = max([slot.reported_step, *(s for s, _ in points)])
            if not ended and trial.should_prune():
                reason = self.studies[slot.arm].pruner.reason(  # type: ignore[attr-defined]
                    self.studies[slot.arm],
                    self.studies[slot.arm]._storage.get_trial(trial._trial_id),
                )
                self._prune(slot, trial, reason)
                return True
        if not slot.findings_at:  # a run just followed has nothing to diagnose yet
            slot.findings_at = now + self._findings_wait()
        steps = int((record.config.get("training") or {}).get("steps", 0))
        progress = record.progress_step or 0
        trained = progress - slot.findings_step >= FINDINGS_EVERY_PROGRESS * steps
        if ended or (now >= slot.findings_at and trained):
            reason = self._critical_finding(record, steps)
            slot.findings_at, slot.findings_step = now + self._findings_wait(), progress
            if reason is not None:
                self._prune(slot, trial, reason)
                return True
        return False

    def _findings_wait(self) -> float:
        """How long until a running trial's findings are read (again): the last live
        read's CPU cost, of any of the study's runs (their series are alike), over the
        share it may take, so that a run's first read keeps the budget too (with short
        runs a first read 10 s in was most of the reads)."""
        return max(FINDINGS_EVERY_S, self.findings_cost_s / FINDINGS_CPU_SHARE)

    def _median_active(self, arm: str) -> bool:
        """Whether the fold median pruner can act on the arm's running trials (enough
        completed trials): until then their curves are read once, at each fold's end."""
        pruning = self.spec.pruning
        return pruning.median and self.completed.get(arm, 0) >= max(pruning.warmup_trials, 1)

    def _critical_finding(self, record: RunRecord, steps: int) -> str | None:
        """A critical finding's reason, or None. An ended run's are those its worker
        stored at its end (its ``info``, already read): the findings' rules and pandas
        are imported by the live reads alone, which short runs never need."""
        stored = record.run_info.get(FINDINGS_INFO_KEY) if record.is_terminal else None
        if isinstance(stored, list):
            return critical_finding(stored, steps)
        # timed from before the import: the first live read pays for the rules, pandas and
        # DuckDB (several reads' worth), and the wait it sets for the next runs says so
        started = time.process_time()
        from db.findings import run_findings

        try:
            found = run_findings(self.store, record.run_id)
            if not record.is_terminal:  # an ended run's read is no measure of a live one
                self.findings_cost_s = time.process_time() - started
            return critical_finding(found, steps)
        except Exception:  # a diagnosis never stops the study
            log.exception("study %s: findings of run %s could not be read", self.study_id,
                          record.run_id)  # fmt: skip
            return None

    def _prune(self, slot: Slot, trial: Trial, reason: str) -> None:
        log.info("study %s: %s trial %d pruned: %s", self.study_id, slot.arm, slot.number, reason)
        trial.set_user_attr("pruned_reason", reason)
        self.studies[slot.arm].tell(trial, state=TrialState.PRUNED)
        self.slots.pop(slot.run_id, None)
        if not self.store.get_run(slot.run_id).is_terminal:
            self.launcher.cancel(slot.run_id)
