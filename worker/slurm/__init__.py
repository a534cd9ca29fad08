"""Runs on a SLURM cluster: submitted through submitit as one SLURM job per
run, followed through SLURM's states, cancelled with scancel, resumed after a requeue.

- ``request``: the resources a run asks SLURM for (``SlurmRequest``);
- ``commands``: SLURM's client commands, with one-line errors;
- ``cluster``: partitions and nodes as SLURM reports them; a request checked against them;
- ``submit``: validate, record ``queued``, submit (``submit_slurm``);
- ``job``: what runs inside the job (``SlurmRunJob``, a submitit ``Checkpointable``);
- ``states``: SLURM's word on each SLURM run (pending reason, end states; used by the reaper);
- ``cancel``: cancel a SLURM run (cancel flag, then scancel).
"""

from worker.slurm.commands import SlurmError
from worker.slurm.request import SlurmRequest

__all__ = ["SlurmError", "SlurmRequest"]
