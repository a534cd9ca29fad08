"""A device tensor's copy to the host that the device does not wait for.

On CUDA the copy goes to pinned memory without blocking and an event marks its end;
``numpy()`` waits for that event only. A loop that reads a step's values after queuing
the next step's work therefore never leaves the device idle while the host reads,
reports and queues. On a CPU the values are kept as they are, not copied: callers hand
over tensors nobody writes to afterwards (a fresh concatenation, a detached loss).
"""

from __future__ import annotations

import numpy as np
import torch


class AsyncHostCopy:
    """``values`` (any device) on their way to the host; ``numpy()`` waits for them.
    ``values`` must not be written to afterwards."""

    def __init__(self, values: torch.Tensor) -> None:
        values = values.detach()
        self._done: torch.cuda.Event | None = None
        if values.device.type == "cuda":
            self._host = torch.empty(values.shape, dtype=values.dtype, pin_memory=True)
            self._host.copy_(values, non_blocking=True)
            self._done = torch.cuda.Event()
            self._done.record()
        else:
            self._host = values.cpu()

    def numpy(self) -> np.ndarray:
        if self._done is not None:
            self._done.synchronize()
            self._done = None
        return self._host.numpy()
