"""``training.devices``' rule and the pieces of data-parallel training: the split of
the global batch, one process's identity operations, the ranks' agreement to stop
(two real gloo ranks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from sphere_engine.config import RunConfig
from sphere_engine.data.batches import iter_batches
from sphere_engine.data.tensor_data import TensorData
from sphere_engine.parallel import SINGLE_PROCESS, DataParallel, StopAgreement


def test_devices_must_divide_the_classes_of_a_pk_batch_or_the_batch() -> None:
    with pytest.raises(ValueError, match=r"^training.devices: 3 does not divide the 5 classes"):
        RunConfig.from_dict(
            {"data": {"batch_size": 20, "samples_per_class": 4}, "training": {"devices": 3}}
        )
    with pytest.raises(
        ValueError, match=r"^training.devices: 4 does not divide data.batch_size 10"
    ):
        RunConfig.from_dict(
            {"data": {"batch_size": 10, "samples_per_class": 0}, "training": {"devices": 4}}
        )
    with pytest.raises(ValueError, match=r"^training.devices: 0 is below the minimum"):
        RunConfig.from_dict({"training": {"devices": 0}})
    config = RunConfig.from_dict(
        {"data": {"batch_size": 16, "samples_per_class": 4}, "training": {"devices": 2}}
    )
    assert config.training.devices == 2
    assert RunConfig.from_dict({}).training.devices == 1


def test_the_ranks_slices_make_the_global_pk_batch_with_whole_classes() -> None:
    labels = torch.arange(12).repeat_interleave(10)
    data = TensorData(torch.randn(len(labels), 3), labels)
    global_batches = iter_batches(data, 24, 4, seed=5)
    ranks = [
        iter_batches(data, 24, 4, seed=5, shard=DataParallel(rank, 3).shard) for rank in range(3)
    ]
    for _ in range(4):
        _, y, indices = next(global_batches)
        parts = [next(rank) for rank in ranks]
        assert torch.equal(torch.cat([p[2] for p in parts]), indices)
        for _, part_labels, _ in parts:
            assert len(part_labels) == 8 and len(set(part_labels.tolist())) == 2
        assert torch.equal(torch.cat([p[1] for p in parts]), y)


def test_one_process_does_no_communication() -> None:
    model = torch.nn.Linear(3, 2)
    assert SINGLE_PROCESS.wrap(model, torch.device("cpu")) is model
    x, y = torch.randn(4, 3), torch.arange(4)
    assert SINGLE_PROCESS.global_batch(x, y, None) == (x, y, None)
    assert SINGLE_PROCESS.mean({"a": torch.tensor(2.0)})["a"].item() == 2.0
    assert StopAgreement(SINGLE_PROCESS, torch.device("cpu"))(True)
    assert SINGLE_PROCESS.shard([1, 2, 3]) == [1, 2, 3] and SINGLE_PROCESS.is_main


@pytest.mark.slow
def test_two_ranks_agree_to_stop_and_gather_equal_shards_without_exchanging_sizes(
    tmp_path: Path,
) -> None:
    from tests.sphere_engine.distributed.processes import torchrun

    done = torchrun(Path(__file__).with_name("data_parallel_job.py"), str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    for rank in range(2):
        result = json.loads((tmp_path / f"rank{rank}.json").read_text())
        # read at once (CPU) the vote of call 3 stops call 3; read later (an
        # accelerator: no wait for the device) it stops call 4, on both ranks
        assert result["told"] == {"False": [3], "True": [4]}
        embeddings, labels, gradients = result["global_batch"]
        assert embeddings == [[0.0] * 3] * 2 + [[1.0] * 3] * 2 and labels == [0, 0, 1, 1]
        assert gradients == [[-0.0 / 2] * 3] * 2 + [[-1.0 / 2] * 3] * 2  # DDP's mean
        assert result["refused"] == f"rank {rank} sends 2 rows where 3 were announced"
