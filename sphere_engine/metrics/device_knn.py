"""Exact neighbours on a torch device (the ``torch-cuda`` backend): chunked matmul + topk.

The same ranking as ``neighbors.py`` (score descending, ties by ascending reference
index, the query's own row removed by index), computed on the device:

- scores in float32 with TF32 off (``highest`` matmul precision), so a score is the
  float32 inner product, never a reduced-precision one;
- per query chunk and reference block, a float ``topk`` of k + 1; blocks merge by
  another ``topk`` (the merged values are the true top k + 1 as a multiset);
- the list is ordered by one sort of int64 keys (the float's order-preserving integer
  in the high 32 bits, the complement of the index in the low 32), so equal scores
  come out by ascending index;
- a row whose k-th score equals its (k + 1)-th (a tie across the cut, which topk
  breaks arbitrarily) is re-ranked by a ``topk`` of those keys over every block.

Memory: never Q × N. The reference stays on the device when it takes at most half of
the budget, else it is streamed in blocks from host memory; a chunk's score rows take
the rest. On CUDA the budget is a quarter of the free device memory (at least the caller's
``memory_budget_mb``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

_LOW = 0xFFFFFFFF
_MAX_CHUNK = 16_384  # queries per chunk at most (topk and result rows stay small)
DEVICE_SHARE = 0.25  # of the free device memory a search may use (training may share it)


def order_keys(scores: torch.Tensor, columns: torch.Tensor) -> torch.Tensor:
    """int64 keys whose descending order is score descending, then index ascending."""
    bits = (scores + 0.0).view(torch.int32)  # + 0.0 turns -0.0 into +0.0
    ordered = bits ^ ((bits >> 31) & 0x7FFFFFFF)  # signed order = float order
    return ordered.to(torch.int64) * (1 << 32) + (_LOW - columns)


def _decode(keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(scores float32, columns int64) of ``order_keys`` keys."""
    ordered = (keys >> 32).to(torch.int32)
    bits = ordered ^ ((ordered >> 31) & 0x7FFFFFFF)  # the map is its own inverse
    return bits.view(torch.float32), _LOW - (keys & _LOW)


@contextmanager
def exact_float32():
    """float32 matmuls at full precision (no TF32) inside, the setting restored after."""
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def device_budget_bytes(device: torch.device, memory_budget_mb: float) -> int:
    """Bytes a search may hold on ``device`` (module doc)."""
    requested = int(memory_budget_mb * 2**20)
    if device.type != "cuda":
        return requested
    free, _ = torch.cuda.mem_get_info(device)
    return max(requested, int(free * DEVICE_SHARE))


class DeviceSearcher:
    """Exact ranked neighbours of query chunks against one reference set on a device."""

    def __init__(
        self, reference: np.ndarray, metric: str, device: str | torch.device, budget_bytes: int
    ) -> None:
        self.device = torch.device(device)
        self.metric = metric
        self.size, dim = reference.shape
        host = torch.from_numpy(np.ascontiguousarray(reference, dtype=np.float32))
        self.resident = host.nbytes <= budget_bytes // 2
        if self.resident:
            block_rows = self.size
        else:  # stream: each block a quarter of the budget
            block_rows = max(1, budget_bytes // 4 // (4 * dim))
            if self.device.type == "cuda":
                host = host.pin_memory()
        self.blocks: list[tuple[int, torch.Tensor]] = []
        for start in range(0, self.size, block_rows):
            part = host[start : start + block_rows]
            self.blocks.append((start, part.to(self.device) if self.resident else part))
        self.block_rows = block_rows
        resident_bytes = host.nbytes if self.resident else 2 * block_rows * 4 * dim
        self.score_bytes = max(1, budget_bytes - resident_bytes)

    def chunk_rows(self, k: int) -> int:
        """Queries per call: their score rows against one block and the k-wide lists."""
        per_query = 4 * self.block_rows + 48 * (k + 2)
        return max(1, min(_MAX_CHUNK, self.score_bytes // per_query))

    def _device_blocks(self) -> Iterator[tuple[int, torch.Tensor]]:
        for start, block in self.blocks:
            yield start, block.to(self.device, non_blocking=True)

    def _scores(
        self, queries: torch.Tensor, query_ids: torch.Tensor, start: int, block: torch.Tensor
    ) -> torch.Tensor:
        scores = queries @ block.T
        if self.metric == "euclidean":  # negated squared distance, as ``score_rows``
            scores.mul_(2)
            scores -= (block * block).sum(1)[None, :]
            scores -= (queries * queries).sum(1, keepdim=True)
        if query_ids is not None:  # leave-one-out: the query's own row by index
            inside = (query_ids >= start) & (query_ids < start + block.shape[0])
            rows = torch.nonzero(inside).flatten()
            scores[rows, query_ids[rows] - start] = -torch.inf
        return scores

    def ranked(
        self, queries: np.ndarray, query_ids: np.ndarray, k: int, exclude_self: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """(scores, indices), each q × k, ranked by the rule of the module doc."""
        with exact_float32(), torch.no_grad():
            chunk = torch.from_numpy(np.ascontiguousarray(queries)).to(self.device)
            ids = torch.from_numpy(query_ids).to(self.device) if exclude_self else None
            fetch = min(k + 1, self.size - int(exclude_self))
            values = columns = None
            for start, block in self._device_blocks():
                scores = self._scores(chunk, ids, start, block)
                top, where = torch.topk(scores, min(fetch, block.shape[0]), dim=1)
                del scores
                where += start
                if values is not None:  # merge with the blocks before
                    top, where = torch.cat([values, top], 1), torch.cat([columns, where], 1)
                    top, pick = torch.topk(top, min(fetch, top.shape[1]), dim=1)
                    where = torch.gather(where, 1, pick)
                values, columns = top, where
            keys = torch.sort(order_keys(values, columns), dim=1, descending=True).values
            if fetch > k:
                values, _ = _decode(keys)
                tied = torch.nonzero(values[:, k - 1] == values[:, k]).flatten()
                keys = keys[:, :k]
                # Keys and scores of a tied row against a block: 20 bytes a column.
                step = max(1, self.score_bytes // (20 * self.block_rows))
                for part in torch.split(tied, step):
                    keys[part] = self._keyed_top(chunk[part], None if ids is None else ids[part], k)
            values, columns = _decode(keys)
            return values.cpu().numpy(), columns.cpu().numpy()

    def _keyed_top(self, queries: torch.Tensor, ids: torch.Tensor | None, k: int) -> torch.Tensor:
        """Exact top-k keys of a few rows over every block (their ties across the cut)."""
        best = None
        for start, block in self._device_blocks():
            scores = self._scores(queries, ids, start, block)
            columns = torch.arange(start, start + block.shape[0], device=self.device)
            keys = torch.topk(order_keys(scores, columns[None, :]), min(k, block.shape[0]), 1)
            best = keys.values if best is None else torch.cat([best, keys.values], 1)
            best = torch.topk(best, min(k, best.shape[1]), dim=1).values
        assert best is not None
        return best
