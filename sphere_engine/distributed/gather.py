"""Collectives over a ``DistributedContext``: rows of uneven shards, scalars, objects.

Every function here is collective: all ranks of the context call it, in the same
order, with tensors of the same width and dtype (the number of rows may differ). On
a single process each one returns its input unchanged, without communication.

One logged step of a data-parallel job costs two all-gathers: the ranks' row counts
(one integer each), then one payload that packs the embeddings with the bits of
their int64 labels (and sample ids), so labels travel exactly. Gradients, gathered
in the backward pass, reuse the counts and cost one all-gather more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from sphere_engine.distributed.context import DistributedContext

__all__ = [
    "GatherError",
    "GatheredBatch",
    "broadcast_object",
    "gather_batch",
    "gather_rows",
    "gather_sizes",
    "reduce_values",
]

REDUCTIONS = ("mean", "sum", "max")
_T = TypeVar("_T")


class GatherError(RuntimeError):
    """A collective failed: another rank stopped or disagreed on what to send."""


@dataclass
class GatheredBatch:
    """The global batch, in rank order: rank 0's rows, then rank 1's, ..."""

    embeddings: torch.Tensor  # float32, on the device the local embeddings were on
    labels: torch.Tensor  # int64
    sample_ids: torch.Tensor | None  # int64, when every rank gave them
    sizes: list[int]  # rows per rank


def gather_sizes(rows: int, ctx: DistributedContext) -> list[int]:
    """Every rank's row count."""
    if not ctx.is_distributed:
        return [rows]
    local = torch.tensor([rows], dtype=torch.int64, device=ctx.device(torch.device("cpu")))
    parts = [torch.empty_like(local) for _ in range(ctx.world_size)]
    _collective(
        "exchanging batch sizes", ctx, lambda: dist.all_gather(parts, local, group=ctx.group)
    )
    return [int(part.item()) for part in parts]


def gather_rows(
    tensor: torch.Tensor, ctx: DistributedContext, sizes: list[int] | None = None
) -> torch.Tensor:
    """All ranks' rows of ``tensor`` (N_r × ...), concatenated in rank order, on the
    device of ``tensor``. ``sizes``: the row counts when already known (saves one
    all-gather); uneven counts are padded for the transfer and trimmed after."""
    if not ctx.is_distributed:
        return tensor
    if sizes is None:
        sizes = gather_sizes(tensor.shape[0], ctx)
    if len(sizes) != ctx.world_size:
        raise GatherError(f"{len(sizes)} row counts announced for {ctx.world_size} ranks")
    if sizes[ctx.rank] != tensor.shape[0]:
        raise GatherError(
            f"rank {ctx.rank} sends {tensor.shape[0]} rows where {sizes[ctx.rank]} were announced"
        )
    longest = max(sizes)
    local = tensor.to(ctx.device(tensor.device)).contiguous()
    if local.shape[0] < longest:
        pad = local.new_zeros((longest - local.shape[0], *local.shape[1:]))
        local = torch.cat([local, pad])
    parts = [torch.empty_like(local) for _ in range(ctx.world_size)]
    _collective("gathering rows", ctx, lambda: dist.all_gather(parts, local, group=ctx.group))
    return torch.cat([part[:size] for part, size in zip(parts, sizes, strict=True)]).to(
        tensor.device
    )


def gather_batch(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    ctx: DistributedContext,
    sample_ids: torch.Tensor | None = None,
    sizes: list[int] | None = None,
) -> GatheredBatch:
    """The global batch of N_r × d embeddings with N_r labels (and sample ids) per rank.
    Sample ids are kept only when every rank gave them. ``sizes``: every rank's N_r when
    all ranks know them (the engine's equal shards): no exchange, whose read of the
    counts would make the host wait for an accelerator."""
    embeddings = embeddings.detach().float()
    labels = labels.detach().reshape(-1).to(device=embeddings.device, dtype=torch.int64)
    if not ctx.is_distributed:
        ids = None if sample_ids is None else sample_ids.reshape(-1).long()
        return GatheredBatch(embeddings, labels, ids, [embeddings.shape[0]])
    rows, width = embeddings.shape
    if sizes is None:
        sizes = gather_sizes(rows, ctx)
    columns = [embeddings, _as_float_bits(labels)]
    if sample_ids is not None:
        ids = sample_ids.detach().reshape(-1).to(device=embeddings.device, dtype=torch.int64)
        columns.append(_as_float_bits(ids))
    else:  # ids the other ranks can tell from a real one: no id anywhere is used
        columns.append(
            _as_float_bits(torch.full((rows,), -1, dtype=torch.int64, device=embeddings.device))
        )
    payload = gather_rows(torch.cat(columns, dim=1), ctx, sizes)
    gathered_labels = _from_float_bits(payload[:, width : width + 2])
    gathered_ids = _from_float_bits(payload[:, width + 2 : width + 4])
    has_ids = bool((gathered_ids >= 0).all()) if sample_ids is not None else False
    return GatheredBatch(
        payload[:, :width].contiguous(),
        gathered_labels,
        gathered_ids if has_ids else None,
        sizes,
    )


def reduce_values(
    values: Mapping[str, float], reduction: str, ctx: DistributedContext
) -> dict[str, float]:
    """``values`` reduced over ranks (``mean``, ``sum`` or ``max``); every rank must
    pass the same names."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduce must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    names = sorted(values)
    if not ctx.is_distributed:
        return {name: float(values[name]) for name in names}
    names_of_ranks: list[Any] = [None] * ctx.world_size
    _collective(
        "comparing metric names",
        ctx,
        lambda: dist.all_gather_object(names_of_ranks, names, group=ctx.group),
    )
    for rank, theirs in enumerate(names_of_ranks):
        if theirs != names:
            raise ValueError(
                f"log(reduce={reduction!r}): rank {rank} logged {theirs}, rank {ctx.rank} {names}; "
                "every rank must log the same metric names"
            )
    device = ctx.device(torch.device("cpu"))
    local = torch.tensor([float(values[n]) for n in names], dtype=torch.float64, device=device)
    op = dist.ReduceOp.MAX if reduction == "max" else dist.ReduceOp.SUM
    _collective("reducing metrics", ctx, lambda: dist.all_reduce(local, op=op, group=ctx.group))
    if reduction == "mean":
        local /= ctx.world_size
    return dict(zip(names, local.cpu().tolist(), strict=True))


def broadcast_object(value: _T, ctx: DistributedContext, src: int = 0) -> _T:
    """``value`` of rank ``src`` on every rank (pickled; for small things: a run id)."""
    if not ctx.is_distributed:
        return value
    box: list[Any] = [value if ctx.rank == src else None]
    _collective(
        "sharing the run",
        ctx,
        lambda: dist.broadcast_object_list(box, src=_global_rank(ctx, src), group=ctx.group),
    )
    return box[0]


def _global_rank(ctx: DistributedContext, rank: int) -> int:
    return dist.get_global_rank(ctx.group, rank) if ctx.group is not None else rank


def _collective(what: str, ctx: DistributedContext, call: Callable[[], Any]) -> None:
    try:
        call()
    except RuntimeError as error:  # gloo / NCCL errors (DistBackendError is one)
        raise GatherError(
            f"spherescope: {what} across {ctx.world_size} ranks failed on rank {ctx.rank} "
            f"(did another rank stop?): {error}"
        ) from error


def _as_float_bits(values: torch.Tensor) -> torch.Tensor:
    """N int64 values as N × 2 float32 columns holding their bits (gathered exactly)."""
    return values.contiguous().view(torch.float32).reshape(-1, 2)


def _from_float_bits(columns: torch.Tensor) -> torch.Tensor:
    return columns.contiguous().view(torch.int64).reshape(-1)
