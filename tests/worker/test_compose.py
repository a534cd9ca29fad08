"""docker-compose.yml and the Dockerfile: valid for Compose, and wired as documented."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from worker import settings

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
WORKERS = ("worker-cpu", "worker-gpu")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.mark.parametrize("profile", [[], ["--profile", "gpu"]], ids=["base", "gpu"])
def test_docker_compose_accepts_the_file(profile: list[str]) -> None:
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("docker-compose is not installed (apt-get install docker-compose)")
    done = subprocess.run(
        [binary, "-f", str(COMPOSE), *profile, "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_redis_has_a_healthcheck_that_the_others_wait_for(compose: dict) -> None:
    services = compose["services"]
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    for name in (*WORKERS, "app"):
        assert services[name]["depends_on"] == {"redis": {"condition": "service_healthy"}}
        env = services[name]["environment"]
        assert (env["REDIS_URL"], env["SPHERESCOPE_HOME"]) == ("redis://redis:6379/0", "/data")


def test_every_service_shares_the_one_run_store_volume(compose: dict) -> None:
    for name in (*WORKERS, "app"):
        assert compose["services"][name]["volumes"] == ["runs:/data"]
    assert "runs" in compose["volumes"]


def test_the_gpu_worker_is_opt_in_and_the_cpu_worker_needs_no_gpu(compose: dict) -> None:
    cpu, gpu = (compose["services"][name] for name in WORKERS)
    assert "profiles" not in cpu and "deploy" not in cpu
    assert cpu["environment"]["CUDA_VISIBLE_DEVICES"] == ""
    assert gpu["profiles"] == ["gpu"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}]
    for service, queue in ((cpu, settings.CPU_QUEUE), (gpu, settings.GPU_QUEUE)):
        command = service["command"]
        assert command[:4] == ["celery", "-A", "worker.celery_app", "worker"]
        assert command[command.index("--queues") + 1] == queue
        assert command[command.index("--concurrency") + 1] == "1"


def test_the_app_serves_8501_on_loopback_with_a_health_check(compose: dict) -> None:
    app = compose["services"]["app"]
    assert app["ports"] == ["127.0.0.1:8501:8501"]
    assert "http://127.0.0.1:8501/_stcore/health" in " ".join(app["healthcheck"]["test"])
    command = app["command"]
    assert command[:3] == ["streamlit", "run", "app/server.py"]
    assert command[command.index("--server.port") + 1] == "8501"


def test_the_image_installs_the_torch_that_constraints_pin() -> None:
    pinned = re.search(r"^torch==(\S+)$", (REPO / "constraints.txt").read_text(), re.M).group(1)
    dockerfile = (REPO / "Dockerfile").read_text()
    assert f"torch=={pinned}" in dockerfile
    assert "pip install -c constraints.txt ." in dockerfile  # the tested versions, not the newest
    assert "SPHERESCOPE_HOME=/data" in dockerfile
