"""A real single-node SLURM cluster for these tests (``slurm_cluster.SlurmCluster``):
installed with apt when missing and running as root, started once per session, stopped
by pid. Where it cannot be, every test here is skipped saying why."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from slurm_cluster import SlurmCluster, install_packages


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    if os.geteuid() != 0:
        pytest.skip("the SLURM tests need root (slurmd starts jobs as their user)")
    problem = install_packages()
    if problem:
        pytest.skip(f"no SLURM here: {problem}")
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except RuntimeError as error:
        pytest.skip(f"the private SLURM cluster did not start: {str(error)[:2000]}")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in cluster.env.items():
            patch.setenv(key, value)
        yield cluster
    cluster.stop()
