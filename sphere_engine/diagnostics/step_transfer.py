"""A step's statistics as packed groups, moved to the host once per logged step.

Each group of statistics (``PackedStatistics``) is its raw values (1-D tensors) plus a
``finish`` function that computes the logged values from them on the host with NumPy in
float64 (``sphere_engine.diagnostics.numpy_finish``). ``StepStatistics.transfer`` concatenates
every group and moves it to the CPU once per logged step (one device sync, not one per
statistic; ``transfer_later`` starts the copy and waits for it when asked); the finish
runs later, K steps of one layout at once (``sphere_engine.diagnostics.batched_finish``).
``reduces_on_host`` says whether a batch's per-sample reductions run on its device (O(N)
numbers travel) or in the host finish (the raw N × d values travel: small CPU batches).
The groups themselves are built in ``sphere_engine.diagnostics`` and
``sphere_engine.diagnostics.direction_tracker``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import torch

from sphere_engine.diagnostics.async_host_copy import AsyncHostCopy
from sphere_engine.diagnostics.batched_finish import HostStep, finish_steps
from sphere_engine.diagnostics.numpy_finish import named_rows

# A CPU batch of at most this many values (N × d) is not reduced by torch at all: its
# raw embeddings (and gradients) go to the host whole, and the batched finish reduces K
# steps of them with NumPy at once (``numpy_finish.batch_per_sample``). On a CPU the
# "transfer" is a copy, while the dozen torch ops of the reduction cost far more in
# dispatch than the batched NumPy finish on a small batch. Larger CPU batches, and every
# GPU batch, are reduced where they live and only O(N) numbers travel. The bound also
# caps what K pending steps hold (32 steps × 2 × 65,536 × 8 bytes).
HOST_REDUCE_MAX_VALUES = 65536


def reduces_on_host(tensor: torch.Tensor, host: bool | None = None) -> bool:
    """Whether ``tensor``'s per-sample reductions run in the host finish (``host``:
    forced either way; ``None``: a CPU tensor of at most HOST_REDUCE_MAX_VALUES)."""
    if host is not None:
        return host
    return tensor.device.type == "cpu" and tensor.numel() <= HOST_REDUCE_MAX_VALUES


# K × W raw float64 values (K steps of one layout) → one {name: value} per row: every
# name of the group, except the norm histogram's empty bins, which are not logged
Finish = Callable[[np.ndarray], list[dict[str, float]]]


class PackedStatistics(Mapping[str, torch.Tensor]):
    """Named statistics of one group: its raw values (1-D tensors, concatenated once
    per step by ``StepStatistics.to_host``, not once per group) and the ``finish``
    function that maps them, on the host, to the logged values (``None``: the raw
    values are the statistics, ``values[i]`` is ``names[i]``). Reading an entry
    through the mapping finishes on the spot (a sync; the training loop does not); an
    empty histogram bin reads as 0. ``layout``: equal for groups whose raw rows one
    ``finish`` call may finish together (stacked); by default the group's own."""

    def __init__(
        self,
        names: tuple[str, ...],
        values: torch.Tensor | tuple[torch.Tensor, ...],
        finish: Finish | None = None,
        layout: tuple[object, ...] | None = None,
    ) -> None:
        # a tuple holds 1-D parts already (the functions below); a tensor may have any shape
        self.parts = (values.reshape(-1),) if isinstance(values, torch.Tensor) else tuple(values)
        self.size = sum(part.numel() for part in self.parts)  # raw values in all
        if finish is None and self.size != len(names):
            raise ValueError(f"values must have {len(names)} entries, one per name")
        self.names = names
        self.finish = finish
        self.layout = (names, self.size, finish) if layout is None else layout

    @property
    def values(self) -> torch.Tensor:
        """The raw values as one 1-D tensor."""
        if not self.parts:
            return torch.zeros(0)
        return torch.cat([part.reshape(-1) for part in self.parts])

    def host_rows(self, raw: np.ndarray) -> list[dict[str, float]]:
        """The logged values of K steps of this group's layout from their raw values as
        read on the host (K × size)."""
        if self.finish is None:
            return named_rows(self.names, raw)
        return self.finish(raw)

    def __getitem__(self, name: str) -> torch.Tensor:
        if name not in self.names:
            raise KeyError(name)
        if self.finish is None:
            return self.values[self.names.index(name)]
        raw = self.values.detach().float().cpu().numpy().astype(np.float64)
        with np.errstate(all="ignore"):  # NaN/inf of a diverging run are values (gaps)
            value = self.host_rows(raw[None, :])[0].get(name, 0.0)  # absent: an empty histogram bin
        return torch.tensor(value, dtype=torch.float64)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def stacked(values: Mapping[str, torch.Tensor]) -> PackedStatistics:
    """Named 0-dim tensors (loss terms, regulariser and mining diagnostics) as one group."""
    with torch.no_grad():
        return PackedStatistics(tuple(values), torch.stack(list(values.values())))


def flat_values(groups: list[PackedStatistics]) -> torch.Tensor:
    """The groups' raw values as one float32 tensor, in order (``StepStatistics.add_flat``)."""
    return torch.cat([part for group in groups for part in group.parts]).float()


class StepStatistics:
    """Collects a step's statistics as tensors and moves them to the host at once.

    Packed groups are kept as they are (raw 1-D tensors and a finish per group); a
    mapping of named 0-dim tensors is stacked into one group; ``transfer`` concatenates
    every raw tensor once and syncs once (the finish comes later, batched); ``to_host``
    is ``transfer`` and the finish of this one step.
    """

    def __init__(self) -> None:
        self.groups: list[PackedStatistics] = []
        # groups added by ``add_flat``: first group's index -> (how many, their raw values)
        self._flat_runs: dict[int, tuple[int, torch.Tensor]] = {}
        self.sample_norms: torch.Tensor | None = None

    def add(self, values: Mapping[str, torch.Tensor]) -> None:
        if isinstance(values, PackedStatistics):
            self.groups.append(values)
        elif values:  # named 0-dim tensors (loss terms, regulariser diagnostics)
            self.add(stacked(values))

    def add_flat(self, groups: list[PackedStatistics], flat: torch.Tensor) -> None:
        """Groups whose raw values are already ``flat`` (``flat_values(groups)``, or a
        CUDA graph's output of it): added without reading their parts."""
        self._flat_runs[len(self.groups)] = (len(groups), flat)
        self.groups.extend(groups)

    def raw_parts(self) -> list[torch.Tensor]:
        """The groups' raw values, in the groups' order."""
        parts: list[torch.Tensor] = []
        index = 0
        while index < len(self.groups):
            count, flat = self._flat_runs.get(index, (0, None))
            if flat is not None:
                parts.append(flat)
                index += count
            else:
                parts.extend(self.groups[index].parts)
                index += 1
        return parts

    def transfer(self) -> HostStep:
        """One device → host transfer for everything (this is the step's sync point)."""
        return self.transfer_later().result()

    def transfer_later(self) -> PendingTransfer | HostStep:
        """Start the one device → host transfer; ``result()`` waits for it (the device
        runs on meanwhile). Values already on the CPU are a ``HostStep`` at once: there
        is nothing to wait for, and the pending object would cost a CPU step ~3 %."""
        parts = self.raw_parts()
        if self.sample_norms is not None:
            parts.append(self.sample_norms.detach().reshape(-1))
        if not parts:
            return HostStep(self.groups, np.zeros(0), np.zeros(0))
        # cat promotes mixed dtypes (labels are exact in float32 below 2**24); every raw
        # value is rounded to float32 on the device, then finished in float64 (widened
        # by the batched finish, off the training thread in the SDK)
        flat = torch.cat(parts).float()
        size = sum(group.size for group in self.groups)
        if flat.device.type == "cpu":
            raw = flat.numpy()
            return HostStep(self.groups, raw[:size], raw[size:])
        return PendingTransfer(self.groups, flat, size)

    def to_host(self) -> tuple[dict[str, float], list[float]]:
        """The step's finished values and tracked-sample norms (transfer and finish now).
        A name added twice keeps its last value, as a dict would."""
        host = self.transfer()
        return finish_steps([host])[0], host.sample_norms.tolist()


class PendingTransfer:
    """A step's raw values on their way to the host (``StepStatistics.transfer_later``)."""

    def __init__(self, groups: list[PackedStatistics], flat: torch.Tensor, size: int) -> None:
        self.groups, self.size = groups, size
        self.copy = AsyncHostCopy(flat)
        self.wall_time = time.time()  # the step's time, not the read's

    def result(self) -> HostStep:
        """The step's ``HostStep`` (waits for the copy)."""
        flat = self.copy.numpy()
        return HostStep(self.groups, flat[: self.size], flat[self.size :], self.wall_time)
