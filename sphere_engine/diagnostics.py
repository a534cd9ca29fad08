"""Per-iteration geometry diagnostics of a batch of embeddings (SCIENCE.md §6).

The device (under ``torch.no_grad``) does only what needs the N × d tensors: the
per-sample norms, the gradient's norm and its dot product with the embedding, the sums
of directions per class. Each group of statistics is ONE small raw vector of those
(O(N) numbers) plus a ``finish`` function that computes the statistics from them on
the host with NumPy in float64 (``sphere_engine.diagnostics_host``: moments,
percentiles, ratios, correlations, NaN for an empty half). ``StepStatistics.transfer``
concatenates every group and moves it to the CPU once per logged step (one device
sync, not one per statistic); the finish runs later, K steps of one layout at once
(``sphere_engine.pending_statistics``). ``PackedStatistics`` is the read-only mapping
from name to value of one group.

This runs every training step, so it is written for few tensor operations: on a CPU
each op costs microseconds of dispatch whatever its size (on 40 numbers NumPy is
several times cheaper), and a tiny matmul or ``index_add_`` may wake a thread pool
(milliseconds on a loaded machine). Moving O(N) numbers instead of a few
scalars costs nothing measurable on a GPU (the transfer is latency-bound).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import torch

from sphere_engine.diagnostics_host import (
    DIRECTION_NAMES,
    EPS,
    GRADIENT_NAMES,
    HISTOGRAM_NAMES,
    NORM_NAMES,
    PAIR_NAMES,
    batch_per_sample,
    finish_directions,
    finish_gradient,
    finish_norms,
    finish_pairs,
    gradient_per_sample,
    half_turns,
    histogram_fractions,
    named_rows,
    norm_histogram,
)
from sphere_engine.pending_statistics import HostStep, finish_steps

__all__ = [
    "DIRECTION_NAMES",
    "GRADIENT_NAMES",
    "HISTOGRAM_NAMES",
    "HOST_REDUCE_MAX_VALUES",
    "NORM_NAMES",
    "PAIR_NAMES",
    "DirectionTracker",
    "PackedStatistics",
    "StepStatistics",
    "batch_statistics",
    "embedding_statistics",
    "gradient_statistics",
    "norm_histogram",
    "norm_statistics",
    "pair_cosines",
]

# A CPU batch of at most this many values (N × d) is not reduced by torch at all: its
# raw embeddings (and gradients) go to the host whole, and the batched finish reduces K
# steps of them with NumPy at once (``diagnostics_host.batch_per_sample``). On a CPU the
# "transfer" is a copy, while the dozen torch ops of the reduction cost ~150 µs of
# dispatch per step on a 40 × 64 batch. Larger CPU batches, and every GPU batch, are
# reduced where they live and only O(N) numbers travel. The bound also caps what K
# pending steps hold (32 steps × 2 × 65,536 × 8 bytes).
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


@torch.no_grad()
def norm_statistics(
    norms: torch.Tensor, sorted_norms: torch.Tensor | None = None
) -> PackedStatistics:
    """Statistics of the L2 norms (one per sample) of a batch of raw embeddings.

    ``norm/var`` is the population variance (divide by N), as the SEC paper reports it.
    (``sorted_norms`` is accepted for compatibility; the host sorts.)
    """

    return PackedStatistics(NORM_NAMES, norms.detach().reshape(-1), _finish_norm_rows)


def _finish_norm_rows(raw: np.ndarray) -> list[dict[str, float]]:
    return named_rows(NORM_NAMES, finish_norms(raw, np.sort(raw, axis=1)))


# at::internal::GRAIN_SIZE: below this many elements a CPU kernel runs on one thread
_SERIAL_ELEMENTS = 32768


def _class_sums(directions: torch.Tensor, labels: torch.Tensor, classes: int) -> torch.Tensor:
    """Σ of the rows of ``directions`` per label (classes × d), rows added in batch
    order. Not one_hot.T @ directions: a tiny matmul wakes the BLAS thread pool. On a
    CPU, ``index_add_`` wakes the OpenMP pool even for a 40 × 64 batch (tens of µs on
    an idle 2-core machine, milliseconds on a busy one), while the accumulating
    ``index_put_`` runs serially below the grain size (but slower than ``index_add_``
    above it); the two give the same sums there."""
    sums = directions.new_zeros(classes, directions.shape[1])
    if directions.device.type == "cpu" and directions.numel() < _SERIAL_ELEMENTS:
        return sums.index_put_((labels,), directions, accumulate=True)
    return sums.index_add_(0, labels, directions)


def _pair_sums(directions: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """[Σ over same-class pairs, Σ over all pairs] of cosines, self-pairs included
    (called under ``no_grad``)."""
    classes = int(labels.max()) + 1  # the sync ``F.one_hot`` would do as well
    class_sums = _class_sums(directions, labels, classes)
    return torch.stack((class_sums.square().sum(), class_sums.sum(dim=0).square().sum()))


@torch.no_grad()
def pair_cosines(directions: torch.Tensor, labels: torch.Tensor) -> PackedStatistics:
    """Mean cosine of positive (same label, i ≠ j) and negative pairs, and their gap.

    ``directions``: N × d unit rows. Computed from per-class sums of directions in
    O(N·d), without the N × N matrix: Σ_{i,j same class} cos = Σ_c ||Σ_{i∈c} f̂_i||²
    (the N self-pairs contribute exactly 1 each). A batch without positives (or
    negatives) yields NaN for that entry, kept as a gap in the series.
    """
    count = len(labels)

    def finish(raw: np.ndarray) -> list[dict[str, float]]:
        return named_rows(PAIR_NAMES, finish_pairs(raw[:, :count], raw[:, count], raw[:, -1]))

    raw = (labels.reshape(-1), _pair_sums(directions, labels))
    return PackedStatistics(PAIR_NAMES, raw, finish, ("pairs", count))


def _gradient_raw(embeddings: torch.Tensor, grad: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Per-sample ||g|| and <g, f>: all the device does for the gradient (called under
    ``no_grad``)."""
    return torch.linalg.vector_norm(grad, dim=1), torch.linalg.vecdot(grad, embeddings)


@torch.no_grad()
def gradient_statistics(
    embeddings: torch.Tensor,
    norms: torch.Tensor | None,
    grad: torch.Tensor,
    norm_order: torch.Tensor | None = None,
    host: bool | None = None,
) -> PackedStatistics:
    """Gradient diagnostics on the embedding (SCIENCE.md §1 and §6).

    - ``grad/norm_inv_corr``: Pearson correlation of ||∂L/∂f_i|| with 1/||f_i||
      (strongly positive for losses on normalised embeddings without SEC);
    - ``grad/radial_cos``: mean |cos(∂L/∂f_i, f_i)| (≈ 0 when the loss only sees
      directions: the gradient rotates f_i and does not stretch it);
    - ``grad/rotation_ratio``: the rotation each sample is pushed by, ||g_⊥||/||f||,
      averaged over the small-norm half of the batch divided by the large-norm half
      (the "unbalanced update" SEC claims to fix; ≈ 1 means balanced);
    - ``grad/norm_mean``: mean ||∂L/∂f_i||.
    Samples with a zero gradient (inactive in the loss) are left out of the cosine.
    ``norms``: the embeddings' norms when already known (``None``: computed here).
    ``host``: see ``reduces_on_host``. (``norm_order`` is accepted for compatibility; the
    host sorts.)
    """
    embeddings, grad = embeddings.detach().float(), grad.detach().float()
    count, width = embeddings.shape
    if reduces_on_host(embeddings, host):
        raw = (embeddings.reshape(-1), grad.reshape(-1))
        finish = functools.partial(_finish_gradient_host, count, width)
        return PackedStatistics(GRADIENT_NAMES, raw, finish, ("gradient-host", count, width))
    if norms is None:
        norms = torch.linalg.vector_norm(embeddings, dim=1)
    raw = (norms.detach().reshape(-1), *_gradient_raw(embeddings, grad))
    finish = functools.partial(_finish_gradient, count)
    return PackedStatistics(GRADIENT_NAMES, raw, finish, ("gradient", count))


def _finish_gradient(count: int, raw: np.ndarray) -> list[dict[str, float]]:
    """K rows of N norms, N ||g||, N <g, f> → GRADIENT_NAMES."""
    norms = raw[:, :count]
    order = np.argsort(norms, axis=1, kind="stable")
    values = finish_gradient(norms, order, raw[:, count : 2 * count], raw[:, 2 * count :])
    return named_rows(GRADIENT_NAMES, values)


def _finish_gradient_host(count: int, width: int, raw: np.ndarray) -> list[dict[str, float]]:
    """K rows of raw N × d embeddings then N × d gradients → GRADIENT_NAMES."""
    blocks = raw.reshape(len(raw), 2, count, width)
    return _finish_gradient(count, gradient_per_sample(blocks[:, 0], blocks[:, 1]))


class DirectionTracker:
    """Follows a fixed set of training samples: their norms and how far they turn.

    ``update(embeddings)`` takes the current raw embeddings of the tracked samples
    (M × d) and returns their norms, the mean angle (degrees) each turned since the
    previous call, and the ratio of that angle in the small-norm half over the
    large-norm half (halves by the norm at the previous call). ``host``: where the
    per-sample work runs (see ``reduces_on_host``): on the host, the update only keeps
    the embeddings, and both updates' embeddings go to the finish.
    """

    def __init__(self, host: bool | None = None) -> None:
        self.host = host
        self.previous: torch.Tensor | None = None  # the embeddings at the last update
        self._norms: torch.Tensor | None = None  # their norms, once computed
        self._unit: tuple[torch.Tensor, torch.Tensor] | None = None  # device: norms, directions

    @torch.no_grad()
    def update(self, embeddings: torch.Tensor) -> PackedStatistics:
        embeddings = embeddings.detach().float()
        previous, self.previous, self._norms = self.previous, embeddings, None
        count, width = embeddings.shape
        if reduces_on_host(embeddings, self.host):
            if previous is None:
                return PackedStatistics(DIRECTION_NAMES, (), _no_turn)
            raw = (previous.reshape(-1), embeddings.reshape(-1))
            finish = functools.partial(_finish_turns_host, count, width)
            return PackedStatistics(DIRECTION_NAMES, raw, finish, ("turns-host", count, width))
        norms = torch.linalg.vector_norm(embeddings, dim=1)
        directions = embeddings / norms.unsqueeze(1).clamp_min(EPS)
        previous_unit, self._unit, self._norms = self._unit, (norms, directions), norms
        if previous_unit is None:
            return PackedStatistics(DIRECTION_NAMES, (), _no_turn)
        previous_norms, previous_directions = previous_unit
        # 2·atan2(|u − v|, |u + v|) is exact for tiny angles, where acos(u·v) in
        # float32 cannot resolve anything below ~0.02°.
        gap = torch.linalg.vector_norm(directions - previous_directions, dim=1)
        total = torch.linalg.vector_norm(directions + previous_directions, dim=1)
        raw = (torch.atan2(gap, total), previous_norms)
        finish = functools.partial(_finish_turns, count)
        return PackedStatistics(DIRECTION_NAMES, raw, finish, ("directions", count))

    @property
    def norms(self) -> torch.Tensor:
        """The norms (M) of the tracked samples at the last ``update``."""
        if self.previous is None:
            raise ValueError("DirectionTracker.norms: update() has not been called yet")
        if self._norms is None:
            with torch.no_grad():
                self._norms = torch.linalg.vector_norm(self.previous, dim=1)
        return self._norms


def _finish_turns(count: int, raw: np.ndarray) -> list[dict[str, float]]:
    """K rows of M half turn angles and M previous norms → DIRECTION_NAMES."""
    return named_rows(DIRECTION_NAMES, finish_directions(raw[:, :count], raw[:, count:]))


def _finish_turns_host(count: int, width: int, raw: np.ndarray) -> list[dict[str, float]]:
    """K rows of the previous and the current M × d embeddings → DIRECTION_NAMES."""
    blocks = raw.reshape(len(raw), 2, count, width)
    half_angles, previous_norms = half_turns(blocks[:, 0], blocks[:, 1])
    return named_rows(DIRECTION_NAMES, finish_directions(half_angles, previous_norms))


_NO_TURN = dict.fromkeys(DIRECTION_NAMES, float("nan"))


def _no_turn(raw: np.ndarray) -> list[dict[str, float]]:
    """The first update: nothing to compare with yet."""
    return [dict(_NO_TURN) for _ in range(len(raw))]


class StepStatistics:
    """Collects a step's statistics as tensors and moves them to the host at once.

    Packed groups are kept as they are (raw 1-D tensors and a finish per group); a
    mapping of named 0-dim tensors is stacked into one group; ``transfer`` concatenates
    every raw tensor once and syncs once (the finish comes later, batched); ``to_host``
    is ``transfer`` and the finish of this one step.
    """

    def __init__(self) -> None:
        self.groups: list[PackedStatistics] = []
        self.sample_norms: torch.Tensor | None = None

    def add(self, values: Mapping[str, torch.Tensor]) -> None:
        if isinstance(values, PackedStatistics):
            self.groups.append(values)
        elif values:  # named 0-dim tensors (loss terms, regulariser diagnostics)
            with torch.no_grad():
                block = torch.stack(list(values.values()))
            self.groups.append(PackedStatistics(tuple(values), block))

    def transfer(self) -> HostStep:
        """One device → host transfer for everything (this is the step's sync point)."""
        parts = [part for group in self.groups for part in group.parts]
        if self.sample_norms is not None:
            parts.append(self.sample_norms.detach().reshape(-1))
        if not parts:
            return HostStep(self.groups, np.zeros(0), np.zeros(0))
        # cat promotes mixed dtypes (labels are exact in float32 below 2**24); every raw
        # value is rounded to float32 on the device, then finished in float64
        flat = torch.cat(parts).float().cpu().numpy().astype(np.float64)
        size = sum(group.size for group in self.groups)
        return HostStep(self.groups, flat[:size], flat[size:])

    def to_host(self) -> tuple[dict[str, float], list[float]]:
        """The step's finished values and tracked-sample norms (transfer and finish now).
        A name added twice keeps its last value, as a dict would."""
        host = self.transfer()
        return finish_steps([host])[0], host.sample_norms.tolist()


@torch.no_grad()
def batch_statistics(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    grad: torch.Tensor | None,
    host: bool | None = None,
) -> PackedStatistics:
    """All per-batch geometry statistics of raw embeddings (N × d) with labels (N):
    norm statistics, the norm histogram, pair cosines and, given ``grad``
    (∂L/∂embeddings), the gradient statistics, as one packed group. ``host``: see
    ``reduces_on_host``."""
    return _embedding_statistics(embeddings, labels, grad, host)[0]


@torch.no_grad()
def embedding_statistics(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    grad: torch.Tensor | None,
    host: bool | None = None,
) -> tuple[PackedStatistics, torch.Tensor | None]:
    """``batch_statistics`` and the float embeddings' norms, which ``gradient_statistics``
    takes when the gradient arrives later (the SDK's hook); ``None`` when the batch is
    reduced on the host (nothing was computed on the device)."""
    return _embedding_statistics(embeddings, labels, grad, host)


_BATCH_NAMES = NORM_NAMES + HISTOGRAM_NAMES + PAIR_NAMES
_BATCH_GRADIENT_NAMES = _BATCH_NAMES + GRADIENT_NAMES
_LATER_NAMES = {False: PAIR_NAMES, True: PAIR_NAMES + GRADIENT_NAMES}  # after the histogram


def _embedding_statistics(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    grad: torch.Tensor | None,
    host: bool | None,
) -> tuple[PackedStatistics, torch.Tensor | None]:
    """``embedding_statistics`` (called under ``no_grad``)."""
    embeddings = embeddings.detach().float()
    count, width = embeddings.shape
    gradient = grad is not None
    names = _BATCH_GRADIENT_NAMES if gradient else _BATCH_NAMES
    if reduces_on_host(embeddings, host):
        parts = [embeddings.reshape(-1), labels.reshape(-1)]
        if gradient:
            parts.append(grad.detach().float().reshape(-1))
        finish = functools.partial(_finish_batch_host, count, width, gradient)
        layout = ("batch-host", count, width, gradient)
        return PackedStatistics(names, tuple(parts), finish, layout), None
    norms = torch.linalg.vector_norm(embeddings, dim=1)
    directions = embeddings / norms.clamp_min(EPS).unsqueeze(1)
    parts = [norms, labels.reshape(-1), _pair_sums(directions, labels)]
    if gradient:
        parts += _gradient_raw(embeddings, grad.detach().float())
    finish = functools.partial(_finish_batch, count, gradient)
    return PackedStatistics(names, tuple(parts), finish, ("batch", count, gradient)), norms


def _finish_batch(count: int, gradient: bool, raw: np.ndarray) -> list[dict[str, float]]:
    """K rows of N norms, N labels, the two pair sums (and N ||g||, N <g, f>) → the
    batch group's values."""
    norms, labels, rest = raw[:, :count], raw[:, count : 2 * count], raw[:, 2 * count :]
    order = np.argsort(norms, axis=1, kind="stable")  # the quantiles and the halves
    rows = named_rows(NORM_NAMES, finish_norms(norms, np.take_along_axis(norms, order, 1)))
    for row, fractions in zip(rows, histogram_fractions(norms), strict=True):
        row.update(fractions)
    pairs = finish_pairs(labels, rest[:, 0], rest[:, 1])
    if gradient:
        values = finish_gradient(norms, order, rest[:, 2 : 2 + count], rest[:, 2 + count :])
        pairs = np.concatenate((pairs, values), axis=1)
    for row, values in zip(rows, pairs.tolist(), strict=True):
        row.update(zip(_LATER_NAMES[gradient], values, strict=True))
    return rows


def _finish_batch_host(
    count: int, width: int, gradient: bool, raw: np.ndarray
) -> list[dict[str, float]]:
    """K rows of raw N × d embeddings, N labels (and N × d gradients) → the batch
    group's values, by way of the per-sample values the device path would compute."""
    rows, size = len(raw), count * width
    embeddings = raw[:, :size].reshape(rows, count, width)
    labels = raw[:, size : size + count]
    grads = raw[:, size + count :].reshape(rows, count, width) if gradient else None
    return _finish_batch(count, gradient, batch_per_sample(embeddings, labels, grads))
