"""Partitions and nodes as SLURM reports them (``scontrol show partition/node -o``), and
a ``SlurmRequest`` checked against them before anything is submitted or recorded."""

from __future__ import annotations

import re
from dataclasses import dataclass

from worker.slurm.commands import run_slurm
from worker.slurm.request import SlurmRequest

GPU_GRES = re.compile(r"(?:^|,)gpu(?::[^:,(]+)?:(\d+)")


@dataclass(frozen=True)
class Partition:
    name: str
    default: bool
    max_time_min: int | None  # None: UNLIMITED
    nodes: tuple[str, ...]
    max_gpus_per_node: int
    total_nodes: int


def parse_minutes(text: str) -> int | None:
    """SLURM's ``[days-]hh:mm:ss`` (or ``mm:ss``, ``mm``) in minutes; None for UNLIMITED."""
    if text.upper() in ("UNLIMITED", "INFINITE", "NONE", ""):
        return None
    days, _, clock = text.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    if len(parts) == 1:
        hours, minutes, seconds = 0, parts[0], 0
    elif len(parts) == 2:
        hours, (minutes, seconds) = 0, parts
    else:
        hours, minutes, seconds = parts[-3:]
    total = (int(days) if days else 0) * 1440 + hours * 60 + minutes
    return total + (1 if seconds else 0)


def _fields(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split() if "=" in part)


def node_gpus() -> dict[str, int]:
    """GPUs per node name (from each node's Gres)."""
    gpus = {}
    for line in run_slurm("scontrol", "show", "node", "-o").splitlines():
        fields = _fields(line)
        if "NodeName" in fields:
            counts = [int(n) for n in GPU_GRES.findall(fields.get("Gres", ""))]
            gpus[fields["NodeName"]] = sum(counts)
    return gpus


def expand_nodes(expression: str) -> tuple[str, ...]:
    """``vm[1-3],gpu7`` → the node names (``scontrol show hostnames``)."""
    if not expression or expression == "(null)":
        return ()
    return tuple(run_slurm("scontrol", "show", "hostnames", expression).split())


def partitions() -> dict[str, Partition]:
    """Every partition of the cluster, by name."""
    gpus = node_gpus()
    found = {}
    for line in run_slurm("scontrol", "show", "partition", "-o").splitlines():
        fields = _fields(line)
        if "PartitionName" not in fields:
            continue
        nodes = expand_nodes(fields.get("Nodes", ""))
        found[fields["PartitionName"]] = Partition(
            name=fields["PartitionName"],
            default=fields.get("Default") == "YES",
            max_time_min=parse_minutes(fields.get("MaxTime", "UNLIMITED")),
            nodes=nodes,
            max_gpus_per_node=max((gpus.get(n, 0) for n in nodes), default=0),
            total_nodes=int(fields.get("TotalNodes", len(nodes)) or 0),
        )
    return found


def check_request(request: SlurmRequest) -> Partition:
    """The partition the request goes to, or ``ValueError`` naming the field at fault."""
    known = partitions()
    if request.partition is None:
        default = next((p for p in known.values() if p.default), None)
        if default is None:
            raise ValueError("slurm partition: the cluster has no default partition; name one")
        partition = default
    elif request.partition in known:
        partition = known[request.partition]
    else:
        names = ", ".join(sorted(known)) or "none"
        raise ValueError(
            f"slurm partition: {request.partition!r} is not a partition of this cluster ({names})"
        )
    limit = partition.max_time_min
    if limit is not None and request.time_min is not None and request.time_min > limit:
        raise ValueError(
            f"slurm time: {request.time_min} min is above partition {partition.name}'s "
            f"MaxTime ({limit} min)"
        )
    if request.gpus > partition.max_gpus_per_node:
        raise ValueError(
            f"slurm gpus: {request.gpus} per node asked, partition {partition.name}'s nodes "
            f"have at most {partition.max_gpus_per_node}"
        )
    if partition.total_nodes and request.nodes > partition.total_nodes:
        raise ValueError(
            f"slurm nodes: {request.nodes} asked, partition {partition.name} has "
            f"{partition.total_nodes}"
        )
    return partition
