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
