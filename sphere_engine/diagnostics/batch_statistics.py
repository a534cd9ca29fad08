"""Per-iteration geometry diagnostics of a batch of embeddings (SCIENCE.md §6).

The groups of statistics of a batch: norms (with the norm histogram), pair cosines and
the gradient's, each a ``PackedStatistics`` (``sphere_engine.diagnostics.step_transfer``: raw
values plus a host ``finish``, moved to the host once per logged step by
``StepStatistics``). Where ``reduces_on_host`` says the device reduces (every GPU batch,
large CPU batches), the device (under ``torch.no_grad``) does only what needs the N × d
tensors: the per-sample norms, the gradient's norm and its dot product with the
embedding, the sums of directions per class, O(N) numbers the host finishes with NumPy
in float64 (``sphere_engine.diagnostics.numpy_finish``: moments, percentiles, ratios,
correlations, NaN for an empty half). A small CPU batch sends its raw values and the
finish does the per-sample work too. The tracked samples' turns are
``sphere_engine.diagnostics.direction_tracker``.

This runs every training step, so it is written for few tensor operations: on a CPU
each op costs microseconds of dispatch whatever its size (on 40 numbers NumPy is
several times cheaper), and a tiny matmul or ``index_add_`` may wake a thread pool
(milliseconds on a loaded machine). Moving O(N) numbers instead of a few
scalars costs nothing measurable on a GPU (the transfer is latency-bound).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from sphere_engine.diagnostics.numpy_finish import (
    EPS,
    GRADIENT_NAMES,
    HISTOGRAM_NAMES,
    NORM_NAMES,
    PAIR_NAMES,
    batch_per_sample,
    finish_gradient,
    finish_norms,
    finish_pairs,
    gradient_per_sample,
    histogram_fractions,
    named_rows,
)
from sphere_engine.diagnostics.step_transfer import (
    PackedStatistics,
    reduces_on_host,
)


@torch.no_grad()
def packed_norm_statistics(norms: torch.Tensor) -> PackedStatistics:
    """Statistics of the L2 norms (one per sample) of a batch of raw embeddings, packed
    for the host (``sphere_engine.metrics.norm_statistics`` is the evaluation's, on
    embeddings). ``norm/var`` is the population variance (divide by N), as the SEC
    paper reports it; the host sorts for the percentiles.
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
    (called under ``no_grad``). On a CPU through per-class sums (O(N·d)); on an
    accelerator through the N × N cosines, which needs no class count read on the host
    (a sync that would make the device wait for the host every step)."""
    if directions.device.type != "cpu":
        return pair_sums_by_matrix(directions, labels)
    classes = int(labels.max()) + 1
    class_sums = _class_sums(directions, labels, classes)
    return torch.stack((class_sums.square().sum(), class_sums.sum(dim=0).square().sum()))


def pair_sums_by_matrix(directions: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``_pair_sums`` from the N × N cosines masked by label equality (no sync)."""
    cosines = directions @ directions.T
    same = (labels[:, None] == labels[None, :]).to(cosines.dtype)
    return torch.stack(((cosines * same).sum(), directions.sum(dim=0).square().sum()))


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
    ``host``: see ``reduces_on_host``.
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
