"""Workers' device counts: advertised in the private Redis, checked at launch, and a run
too large for the worker that takes it goes back to the queue with the reason."""

from __future__ import annotations

import re

import pytest
from worker_fixtures import config, wait_for

from db.store import RunStore
from worker import cancel, launch, routing
from worker.celery_app import broker_url
from worker.devices import check_devices_available, live_worker_devices
from worker.tasks import train_run


def advertised(node: str) -> int:
    client = routing.redis_client(broker_url())
    # advertised by the reaper's pass, which may come half a minute late on a loaded machine
    return wait_for(lambda: live_worker_devices(client).get(node), 120, f"{node}'s devices")


def test_a_launch_above_the_largest_live_worker_is_refused_naming_it(store, worker) -> None:
    devices = advertised(worker.node) + 1
    assert len(live_worker_devices(routing.redis_client(broker_url()))) == 1
    runs_before = len(store.list_runs())
    too_many = config(
        data={
            "name": "synthetic",
            "options": {"num_classes": 2 * devices + 2},
            "batch_size": 2 * devices,
            "samples_per_class": 2,
        },
        training={"devices": devices},
    )

    with pytest.raises(ValueError) as raised:
        launch(too_many)

    assert str(raised.value) == (
        f"training.devices: {devices} is more than any live worker has "
        f"(the largest, {worker.node}, has {devices - 1})"
    )
    assert len(store.list_runs()) == runs_before  # nothing recorded


def test_the_device_check_names_the_largest_worker_and_waits_when_none_is_alive() -> None:
    live = {"cpu-a@h": 2, "gpu0-b@h": 1}
    with pytest.raises(ValueError, match=r"the largest, cpu-a@h, has 2\)$"):
        check_devices_available(4, live)
    check_devices_available(2, live)
    check_devices_available(8, {})  # no worker alive: the run waits in the queue


def test_a_worker_with_too_few_devices_sends_the_run_back_waiting(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPHERESCOPE_WORKER_DEVICES", "1")
    run_id = store.create_run(
        config(steps=5, data={"samples_per_class": 2}, training={"devices": 2})
    )
    try:
        assert train_run.apply((run_id,)).get() == "queued"
        record = store.get_run(run_id)
        assert record.status == "queued"
        assert re.fullmatch(
            r"waiting for a worker with 2 devices \(\S+, which took it, has 1\)",
            record.status_message,
        ), record.status_message
    finally:
        assert cancel(run_id) == "cancelled"
    # a cancelled run is not sent back again: the lifecycle skips it
    assert train_run.apply((run_id,)).get() == "cancelled"
