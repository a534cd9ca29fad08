"""The collectives with two real gloo ranks under torchrun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sphere_engine.distributed.processes import torchrun

pytestmark = pytest.mark.slow


def test_two_ranks_gather_uneven_shards_reduce_share_and_rebuild_the_evaluation_set(
    tmp_path: Path,
) -> None:
    done = torchrun(Path(__file__).with_name("gather_job.py"), str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    rank0 = [[float(3 * i + j) for j in range(3)] for i in range(2)]
    rank1 = [[float(3 * i + j + 100) for j in range(3)] for i in range(3)]
    for rank, result in enumerate(results):
        assert result["context"] == [rank, 2, rank, "torchrun", "gloo"]
        assert result["sizes"] == [2, 3]
        assert result["embeddings"] == rank0 + rank1
        assert result["labels"] == [2**40] * 2 + [2**40 + 1] * 3  # exact int64
        assert result["ids"] == [0, 1, 10, 11, 12]
        assert result["gradients"] == [[-v for v in row] for row in rank0 + rank1]
        assert result["mean"] == {"acc": 15.0, "loss": 1.5}
        assert result["sum"] == {"acc": 30.0, "loss": 3.0}
        assert result["max"] == {"acc": 20.0, "loss": 2.0}
        assert result["run_id"] == "run-from-0"
        # DistributedSampler padded rank 1's shard with sample 0: dropped
        assert result["union"] == list(range(7))
        assert result["union_rows"] == [float(i) for i in range(7)]
        assert result["by_id"] == list(range(7))
        assert result["holds_group"] is False
