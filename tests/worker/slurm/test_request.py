"""SLURM requests and SLURM's time format, without a cluster."""

from __future__ import annotations

import pytest

from worker.slurm.cluster import parse_minutes
from worker.slurm.request import SlurmRequest


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("30", 30), ("00:30:00", 30), ("1-00:00:00", 1440), ("2:00:01", 121), ("UNLIMITED", None)],
)
def test_slurm_time_limits_in_minutes(text: str, minutes: int | None) -> None:
    assert parse_minutes(text) == minutes


def test_a_request_becomes_submitit_parameters() -> None:
    request = SlurmRequest(time_min=None, gpus=1, mem_gb=1.5, account="lab").resolved("gpu", 30)
    parameters = request.executor_parameters("gpu", "job")
    assert (parameters["partition"], parameters["time"], parameters["gpus_per_node"]) == (
        "gpu",
        30,
        1,
    )
    assert (parameters["mem"], parameters["account"], parameters["signal_delay_s"]) == (
        "1536M",
        "lab",
        90,
    )
    assert "qos" not in parameters


def test_the_ranks_of_a_run_come_from_its_devices_split_over_nodes_and_gpus() -> None:
    assert SlurmRequest().tasks_per_node(devices=2) == 2  # CPU ranks on one node
    assert SlurmRequest(nodes=2, gpus=4).tasks_per_node(devices=8) == 4
    parameters = SlurmRequest(nodes=2, gpus=4, time_min=5).executor_parameters("gpu", "job", 4)
    assert (parameters["nodes"], parameters["ntasks_per_node"]) == (2, 4)
    assert parameters["srun_args"] == ["--kill-on-bad-exit=1"]
    assert "srun_args" not in SlurmRequest(time_min=5).executor_parameters("gpu", "job", 1)


def test_a_request_that_does_not_make_the_configs_ranks_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"^training\.devices: 1, but slurm gpus 2 per node"):
        SlurmRequest(gpus=2).tasks_per_node()
    with pytest.raises(ValueError, match=r"set training\.devices to 8$"):
        SlurmRequest(nodes=2, gpus=4).tasks_per_node(devices=4)
    with pytest.raises(ValueError, match=r"^slurm nodes: 3 do not split training\.devices 4"):
        SlurmRequest(nodes=3).tasks_per_node(devices=4)
    with pytest.raises(ValueError, match="slurm mem_gb"):
        SlurmRequest(mem_gb=0)
