"""SLURM's client commands (sbatch, squeue, scancel, sinfo, scontrol, sacct): run with a
timeout, failures as ``SlurmError`` with one line naming the command."""

from __future__ import annotations

import shutil
import subprocess


class SlurmError(ValueError):
    """SLURM is missing, refused a request or failed; the message is one line."""


def require(command: str) -> str:
    """The path of ``command``, or ``SlurmError`` naming it."""
    path = shutil.which(command)
    if path is None:
        raise SlurmError(f"SLURM: {command!r} is not on PATH (run this on a SLURM login node)")
    return path


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run_slurm(command: str, *args: str, timeout_s: float = 30.0) -> str:
    """``command args`` → its stdout; ``SlurmError`` with its last stderr line if it fails."""
    try:
        done = subprocess.run(
            [require(command), *args],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SlurmError(f"SLURM: {command} did not answer in {timeout_s:.0f} s") from None
    if done.returncode:
        detail = last_line(done.stderr) or last_line(done.stdout) or f"exit {done.returncode}"
        raise SlurmError(f"SLURM: {command} failed: {detail}")
    return done.stdout
