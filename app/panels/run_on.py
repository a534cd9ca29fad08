"""The Launch page's "Run on: workers | SLURM" choice and the SLURM job's fields. The
choice and the fields are remembered for the session (the next launch starts from them),
also while the workers are chosen and the fields are hidden."""

from __future__ import annotations

from typing import Any

import streamlit as st

MEMORY = "launch.run_on.memory"
WORKERS, SLURM = "workers", "SLURM"
DEFAULTS: dict[str, Any] = {
    "where": WORKERS,
    "partition": "",
    "time_min": 60,
    "gpus": 0,
    "nodes": 1,
    "cpus_per_task": 0,
    "mem_gb": 0.0,
    "account": "",
    "qos": "",
    "constraint": "",
}


def _memory() -> dict[str, Any]:
    return st.session_state.setdefault(MEMORY, dict(DEFAULTS))


def render() -> dict[str, Any] | None:
    """The SLURM request's fields (``SlurmRequest`` keyword arguments), or None for the
    workers."""
    memory = _memory()
    where = st.radio(
        "Run on", (WORKERS, SLURM), index=(WORKERS, SLURM).index(memory["where"]),
        horizontal=True, key="launch.run_on",
        help="workers: the Celery workers of this stack. SLURM: one SLURM job per run "
        "(the store must be on a filesystem the compute nodes share).",
    )  # fmt: skip
    memory["where"] = where
    if where == WORKERS:
        return None
    first, second, third = st.columns(3)
    key = "launch.slurm."
    memory["partition"] = first.text_input(
        "Partition", memory["partition"], key=key + "partition", help="empty: the default"
    )
    memory["time_min"] = second.number_input(
        "Time limit (minutes)", 1, value=int(memory["time_min"]), key=key + "time_min"
    )
    memory["gpus"] = third.number_input(
        "GPUs per node", 0, value=int(memory["gpus"]), key=key + "gpus",
        help="one rank per GPU: nodes × GPUs per node must equal training.devices",
    )  # fmt: skip
    memory["nodes"] = first.number_input(
        "Nodes", 1, value=int(memory["nodes"]), key=key + "nodes",
        help="training.devices ranks split evenly over the nodes (rank 0 writes the run)",
    )  # fmt: skip
    memory["cpus_per_task"] = second.number_input(
        "CPUs (0: SLURM's default)", 0, value=int(memory["cpus_per_task"]), key=key + "cpus"
    )
    memory["mem_gb"] = third.number_input(
        "Memory GB (0: SLURM's default)", 0.0, value=float(memory["mem_gb"]), key=key + "mem"
    )
    memory["account"] = first.text_input("Account", memory["account"], key=key + "account")
    memory["qos"] = second.text_input("QOS", memory["qos"], key=key + "qos")
    memory["constraint"] = third.text_input(
        "Constraint", memory["constraint"], key=key + "constraint"
    )
    return request_fields(memory)


def request_fields(memory: dict[str, Any]) -> dict[str, Any]:
    """The form's values as ``SlurmRequest`` fields (empty and zero: SLURM's default)."""
    return {
        "partition": memory["partition"].strip() or None,
        "time_min": int(memory["time_min"]),
        "gpus": int(memory["gpus"]),
        "nodes": int(memory["nodes"]),
        "cpus_per_task": int(memory["cpus_per_task"]) or None,
        "mem_gb": float(memory["mem_gb"]) or None,
        "account": memory["account"].strip() or None,
        "qos": memory["qos"].strip() or None,
        "constraint": memory["constraint"].strip() or None,
    }
