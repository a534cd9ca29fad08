"""A run that ended keeps its series cached (``app.data.reads``): a page opened on it
again reads nothing anew, and a rerun of it is read afresh."""

from __future__ import annotations

import pytest

from app import data
from db import queries


def _log(store, run_id: str, steps: range) -> None:
    with store.tracker(run_id, flush_interval=60) as tracker:
        for step in steps:
            tracker.track_many({"loss/total": float(step)}, step)


@pytest.fixture
def reads(monkeypatch) -> list[tuple[str, ...]]:
    """The run ids of every series read that reached the store."""
    done: list[tuple[str, ...]] = []
    real = queries.metric_series

    def counted(store, run_ids, *args, **kwargs):
        done.append(tuple(run_ids))
        return real(store, run_ids, *args, **kwargs)

    monkeypatch.setattr(queries, "metric_series", counted)
    return done


def test_an_ended_run_is_read_once_and_a_rerun_anew(store, reads):
    run_id = store.create_run({"training": {"steps": 20}}, "ended")
    store.set_status(run_id, "running")
    _log(store, run_id, range(1, 11))
    store.set_status(run_id, "finished")
    reads.clear()  # the findings written at the end read the series too

    first, _ = data.metric_series([run_id], ["loss/total"])
    data.reads.run.clear()  # the run's record read anew: the same end, the same series
    again, _ = data.metric_series([run_id], ["loss/total"])
    assert again["step"].tolist() == first["step"].tolist() == list(range(1, 11))
    assert reads == [(run_id,)]

    store.set_status(run_id, "queued")  # run again: it logs more, then ends again
    store.set_status(run_id, "running")
    _log(store, run_id, range(11, 21))
    store.set_status(run_id, "finished")
    data.reads.run.clear()
    rerun, _ = data.metric_series([run_id], ["loss/total"])
    assert rerun["step"].tolist() == list(range(1, 21))


def test_a_running_run_is_not_kept(store, reads):
    run_id = store.create_run({"training": {"steps": 20}}, "running")
    store.set_status(run_id, "running")
    _log(store, run_id, range(1, 6))
    reads.clear()
    data.metric_series([run_id], ["loss/total"])
    data.reads._series.clear()  # what a second past the short cache's life does
    data.metric_series([run_id], ["loss/total"])
    assert reads == [(run_id,), (run_id,)]
