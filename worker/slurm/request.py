"""What one run asks SLURM for: partition, time limit and resources (``SlurmRequest``).
Recorded with the run (``executor.json``'s ``limits``) and turned into submitit's
executor parameters here, in one place."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

DEFAULT_TIME_MIN = 60
#: seconds before the time limit at which SLURM signals the job (``--signal``), at most
SIGNAL_BEFORE_LIMIT_S = 90


@dataclass(frozen=True)
class SlurmRequest:
    """``partition`` None: the cluster's default; ``time_min`` None: the partition's MaxTime
    (or ``DEFAULT_TIME_MIN`` where it has none). Counts are per node, as sbatch reads them."""

    partition: str | None = None
    time_min: int | None = None
    gpus: int = 0
    nodes: int = 1
    cpus_per_task: int | None = None
    mem_gb: float | None = None
    account: str | None = None
    qos: str | None = None
    constraint: str | None = None

    def __post_init__(self) -> None:
        for name, least in (("time_min", 1), ("gpus", 0), ("nodes", 1), ("cpus_per_task", 1)):
            value = getattr(self, name)
            if value is None and name in ("cpus_per_task", "time_min"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"slurm {name}: {value!r} must be an integer >= {least}")
        if self.mem_gb is not None and not self.mem_gb > 0:
            raise ValueError(f"slurm mem_gb: {self.mem_gb!r} must be a number > 0")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SlurmRequest:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"slurm request: unknown field(s) {', '.join(unknown)}")
        return cls(**data)

    def tasks_per_node(self, devices: int = 1) -> int:
        """The SLURM tasks (one rank each) per node of a run with ``training.devices``
        processes in all. The config's ``devices`` is the run's world size (its batch is
        checked to split over it), so the request must make exactly that many ranks:
        ``nodes`` × tasks per node, with one GPU per task where it asks for GPUs.
        ``ValueError`` naming the field otherwise."""
        if devices % self.nodes:
            raise ValueError(
                f"slurm nodes: {self.nodes} do not split training.devices {devices} "
                "evenly (each node runs devices / nodes ranks)"
            )
        per_node = devices // self.nodes
        if self.gpus and self.gpus != per_node:
            world = self.gpus * self.nodes
            raise ValueError(
                f"training.devices: {devices}, but slurm gpus {self.gpus} per node on "
                f"{self.nodes} node(s) make {world} ranks (one per GPU); set "
                f"training.devices to {world}"
            )
        return per_node

    def resolved(self, partition: str, max_time_min: int | None) -> SlurmRequest:
        """This request with its partition and time limit filled in."""
        time_min = self.time_min or min(max_time_min or DEFAULT_TIME_MIN, DEFAULT_TIME_MIN)
        return replace(self, partition=partition, time_min=time_min)

    @property
    def signal_delay_s(self) -> int:
        """When SLURM warns the job before its limit: 90 s, or a quarter of a short limit."""
        return max(10, min(SIGNAL_BEFORE_LIMIT_S, (self.time_min or 0) * 60 // 4))

    def executor_parameters(
        self, partition: str, job_name: str, tasks_per_node: int = 1
    ) -> dict[str, Any]:
        """submitit ``SlurmExecutor.update_parameters`` keyword arguments; each of the
        ``nodes`` × ``tasks_per_node`` tasks is one rank of the run."""
        parameters: dict[str, Any] = {
            "job_name": job_name,
            "partition": partition,
            "time": self.time_min or DEFAULT_TIME_MIN,
            "nodes": self.nodes,
            "ntasks_per_node": tasks_per_node,
            "signal_delay_s": self.signal_delay_s,
            "additional_parameters": {"requeue": True},
        }
        if self.gpus:
            parameters["gpus_per_node"] = self.gpus
        if self.nodes * tasks_per_node > 1:  # a rank that fails ends the others (no hang)
            parameters["srun_args"] = ["--kill-on-bad-exit=1"]
        optional = {
            "cpus_per_task": self.cpus_per_task,
            "mem": f"{int(self.mem_gb * 1024)}M" if self.mem_gb else None,
            "account": self.account,
            "qos": self.qos,
            "constraint": self.constraint,
        }
        parameters.update({k: v for k, v in optional.items() if v is not None})
        return parameters
