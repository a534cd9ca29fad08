"""Real multi-process jobs for the distributed tests: torchrun on a free port, gloo."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def torchrun(
    script: Path,
    *args: str,
    nproc: int = 2,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    rdzv_id: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` under ``python -m torch.distributed.run`` with ``nproc`` CPU ranks
    (``rdzv_id``: a c10d rendezvous of that id, which becomes TORCHELASTIC_RUN_ID)."""
    if rdzv_id is None:
        rendezvous = ["--master_addr=127.0.0.1", f"--master_port={free_port()}"]
    else:
        rendezvous = [
            "--rdzv_backend=c10d",
            f"--rdzv_endpoint=127.0.0.1:{free_port()}",
            f"--rdzv_id={rdzv_id}",
        ]
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc_per_node={nproc}",
        *rendezvous,
        "--monitor_interval=0.1",
        str(script),
        *args,
    ]
    return _run(command, env, timeout)


# ``accelerate``'s CLI imports timm, and so torchvision, on start. This machine's
# torchvision wheel is built for CUDA and fails to import on the CPU-only torch
# (``operator torchvision::nms does not exist``); ``sphere_engine.tv_compat`` defines
# the two missing operator schemas first. The CLI itself, its launcher and the ranks it
# starts are Accelerate's own, unchanged.
ACCELERATE_CLI = (
    "import sys, sphere_engine.tv_compat; "
    "from accelerate.commands.accelerate_cli import main; sys.exit(main())"
)


def accelerate_launch(
    script: Path,
    *args: str,
    nproc: int = 2,
    env: dict[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` under ``accelerate launch`` with ``nproc`` CPU ranks (gloo).

    ``--cpu`` with several processes starts only one unless MPI is set up (Accelerate's
    multi-CPU launch is ``mpirun``); its launch through torch's elastic launcher is
    ``--multi_gpu``, which on a machine without visible GPUs starts ``nproc`` processes
    that the script puts on the CPU (``TrainingArguments(use_cpu=True)`` or
    ``Accelerator(cpu=True)``): Accelerate then makes them a MULTI_CPU job over gloo."""
    command = [
        sys.executable,
        "-c",
        ACCELERATE_CLI,
        "launch",
        "--multi_gpu",
        f"--num_processes={nproc}",
        "--num_machines=1",
        "--mixed_precision=no",
        "--dynamo_backend=no",
        f"--main_process_port={free_port()}",
        str(script),
        *args,
    ]
    return _run(command, env, timeout)


def _run(command: list[str], env: dict | None, timeout: float) -> subprocess.CompletedProcess:
    """``command`` from the repository root: one thread per rank, no GPU."""
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
        **(env or {}),
    }
    return subprocess.run(
        command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=timeout
    )
