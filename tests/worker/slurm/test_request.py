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


def test_several_gpus_or_nodes_are_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="slurm gpus: 2 asked"):
        SlurmRequest(gpus=2).check_one_process()
    with pytest.raises(ValueError, match="slurm nodes: 3 asked"):
        SlurmRequest(nodes=3).check_one_process()
    with pytest.raises(ValueError, match=r"training\.devices: 2; a SLURM run trains in one"):
        SlurmRequest().check_one_process(devices=2)
    with pytest.raises(ValueError, match="slurm mem_gb"):
        SlurmRequest(mem_gb=0)
