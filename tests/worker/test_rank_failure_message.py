"""Which rank a multi-device run's failure names: the cause, not the ranks the agent stopped."""

from __future__ import annotations

import signal

from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

from worker.distributed_run import describe_rank_failure


def _failure(rank: int, pid: int, exitcode: int, timestamp: int) -> ProcessFailure:
    failure = ProcessFailure(local_rank=rank, pid=pid, exitcode=exitcode, error_file="")
    failure.timestamp = timestamp
    return failure


def test_the_rank_killed_is_named_not_the_one_the_agent_stopped_at_the_same_time() -> None:
    failures = {
        0: _failure(0, 100, -signal.SIGTERM, 1000),  # stopped by the agent afterwards
        1: _failure(1, 101, -signal.SIGKILL, 1000),  # the cause
    }
    error = ChildFailedError("train", failures)
    assert describe_rank_failure(error, 2) == "rank 1 of 2 was killed by SIGKILL (pid 101)"


def test_ranks_all_stopped_by_sigterm_name_the_first() -> None:
    failures = {
        0: _failure(0, 100, -signal.SIGTERM, 999),
        1: _failure(1, 101, -signal.SIGTERM, 1000),
    }
    error = ChildFailedError("train", failures)
    assert describe_rank_failure(error, 2) == "rank 0 of 2 was killed by SIGTERM (pid 100)"
