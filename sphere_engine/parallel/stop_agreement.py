"""All ranks of a job stop at the same step once any of them asks (rank 0 reads the
run's cancel flag), without the host waiting for the device.

Each step every rank all-reduces its vote (the maximum: any rank's stop is everyone's).
On a CPU the vote is read at once. On an accelerator a read of this step's vote would
wait for everything queued before it, the previous step's forward and backward
included, and leave the device idle while the host prepares the next step; so each
call reads the vote of the call before (copied to the host without blocking,
``AsyncHostCopy``) and every rank stops one step after the request, all at the same step.
"""

from __future__ import annotations

import torch

from sphere_engine.diagnostics.async_host_copy import AsyncHostCopy
from sphere_engine.parallel.data_parallel import DataParallel


class StopAgreement:
    """``agreement(stop)`` → whether every rank stops now (see the module doc).
    ``read_later``: read the previous call's vote (default: on an accelerator)."""

    def __init__(
        self, parallel: DataParallel, device: torch.device, *, read_later: bool | None = None
    ) -> None:
        self.parallel, self.device = parallel, device
        self.read_later = device.type != "cpu" if read_later is None else read_later
        self._earlier: AsyncHostCopy | None = None  # the previous call's vote, on its way

    def __call__(self, stop: bool) -> bool:
        if not self.parallel.is_distributed:
            return stop
        import torch.distributed as dist

        vote = torch.full((1,), 1.0 if stop else 0.0, device=self.device)  # no host copy
        dist.all_reduce(vote, op=dist.ReduceOp.MAX)
        if not self.read_later:
            return bool(vote.item())
        earlier, self._earlier = self._earlier, AsyncHostCopy(vote)
        return earlier is not None and bool(earlier.numpy()[0])
