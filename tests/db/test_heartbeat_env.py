"""``SPHERESCOPE_HEARTBEAT_S`` has one reader, shared by the worker and the SDK."""

from __future__ import annotations

import pytest

from db import heartbeat


def test_unset_or_empty_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(heartbeat.HEARTBEAT_ENV, raising=False)
    assert heartbeat.heartbeat_interval() == heartbeat.DEFAULT_HEARTBEAT_S
    monkeypatch.setenv(heartbeat.HEARTBEAT_ENV, " ")
    assert heartbeat.heartbeat_interval() == heartbeat.DEFAULT_HEARTBEAT_S


def test_a_number_of_seconds_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(heartbeat.HEARTBEAT_ENV, "0.25")
    assert heartbeat.heartbeat_interval() == 0.25


@pytest.mark.parametrize(("raw", "message"), [("soon", "a number of seconds"), ("0", "> 0")])
def test_a_bad_value_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, raw: str, message: str
) -> None:
    monkeypatch.setenv(heartbeat.HEARTBEAT_ENV, raw)
    with pytest.raises(ValueError, match=f"SPHERESCOPE_HEARTBEAT_S must be {message}"):
        heartbeat.heartbeat_interval()


def test_worker_and_sdk_use_the_same_reader() -> None:
    import spherescope.run
    import worker.analysis_epilogue
    import worker.execution

    for module in (spherescope.run, worker.execution, worker.analysis_epilogue):
        assert module.heartbeat_interval is heartbeat.heartbeat_interval
