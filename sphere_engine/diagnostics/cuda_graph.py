"""A step's fixed-shape diagnostic work replayed as one CUDA graph.

On a GPU a logged step's diagnostics are some sixty small kernels and the tracked
samples' pass is a whole forward, hundreds more. What they cost is the host's launching
them (10–20 µs each, the kernels themselves run in microseconds), and a ResNet-50 step
at batch 64 on an H100 / H200 is already bound by its launches: the host, not the
device, sets the pace, so every diagnostic kernel launched slows the run. Captured
once, the same work is one graph launch plus one copy per input.

``GraphedPass(function)`` calls ``function(*inputs)`` eagerly until it has seen the
inputs' layout (shapes, dtypes, strides; ``None`` allowed) ``warmup_calls`` times, then
captures it and, for that layout, copies the inputs into the graph's own tensors and
replays it. What the function returned at the capture is returned on every replay:
its tensors are the graph's, overwritten by the next replay, so a caller queues what
it needs from them (a copy to the host, new tensors) before calling again. The
function must read tensors only through its inputs (anything else it reads is frozen
at the capture's address) and must not synchronise with the host. Off CUDA, or when
a capture fails (logged once), every call is eager.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import torch

log = logging.getLogger(__name__)

MAX_LAYOUTS = 4  # graphs kept per pass; a pass seeing more layouts runs them eagerly
MAX_COUNTED = 64  # layouts whose calls are counted towards a capture

Layout = tuple[tuple[Any, ...] | None, ...]


class GraphedPass:
    """``function`` over inputs of a fixed layout, replayed as a CUDA graph (module doc)."""

    def __init__(self, function: Callable[..., Any], *, name: str, warmup_calls: int = 1) -> None:
        self.function, self.name, self.warmup_calls = function, name, warmup_calls
        self._seen: dict[Layout, int] = {}
        self._graphs: dict[Layout, _Captured] = {}
        self.failed = False  # a capture failed: eager from then on

    @property
    def captured(self) -> int:
        return len(self._graphs)

    def __call__(self, *inputs: torch.Tensor | None) -> Any:
        layout = _layout(inputs)
        captured = self._graphs.get(layout)
        if captured is not None:
            return captured.replay(inputs)
        graphable = layout is not None and not self.failed and len(self._graphs) < MAX_LAYOUTS
        # a pass whose shapes keep changing (a miner's variable pair lists) is not counted
        # beyond MAX_COUNTED layouts: the counts stay few over a long run
        counted = layout in self._seen or len(self._seen) < MAX_COUNTED
        if graphable and counted:
            seen = self._seen[layout] = self._seen.get(layout, 0) + 1
            if seen > self.warmup_calls and (captured := self._capture(layout, inputs)):
                return captured.replay(inputs)
        with torch.no_grad():
            return self.function(*inputs)

    def _capture(self, layout: Layout, inputs: tuple) -> _Captured | None:
        """The layout's graph, kept; None when the capture failed (eager from then on)."""
        try:
            captured = _Captured.capture(self.function, inputs)
        except Exception as error:  # a kernel that cannot be captured
            self.failed = True
            log.warning("diagnostics: %s runs eagerly (no CUDA graph: %s)", self.name, error)
            return None
        self._graphs[layout] = captured
        return captured


class _Captured:
    """One layout's graph: its input tensors, and what the function returned."""

    def __init__(self, graph: Any, inputs: tuple[torch.Tensor | None, ...], output: Any) -> None:
        self.graph, self.inputs, self.output = graph, inputs, output

    @classmethod
    def capture(cls, function: Callable[..., Any], inputs: tuple) -> _Captured:
        with torch.no_grad():
            static = tuple(None if x is None else torch.empty_like(x).copy_(x) for x in inputs)
        # warm-up on a side stream first (lazy initialisation of libraries and
        # workspaces must not happen inside the capture), as torch's recipe does
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), torch.no_grad():
            function(*static)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        # thread_local: the loader's pin-memory thread and background evaluations use
        # CUDA meanwhile; only this thread's calls must be capturable
        with torch.cuda.graph(graph, capture_error_mode="thread_local"), torch.no_grad():
            output = function(*static)
        return cls(graph, static, output)

    @torch.no_grad()
    def replay(self, inputs: tuple[torch.Tensor | None, ...]) -> Any:
        for static, given in zip(self.inputs, inputs, strict=True):
            if static is not None and given is not static:
                static.copy_(given)
        self.graph.replay()
        return self.output


def _layout(inputs: tuple[torch.Tensor | None, ...]) -> Layout | None:
    """The inputs' layout, or None where a graph cannot serve them (not all on CUDA)."""
    layout = []
    for x in inputs:
        if x is None:
            layout.append(None)
        elif x.device.type != "cuda":
            return None
        else:
            layout.append((tuple(x.shape), x.dtype, x.stride(), x.device.index))
    return tuple(layout)
