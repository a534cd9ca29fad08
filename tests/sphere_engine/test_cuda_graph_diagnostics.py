"""The diagnostics replayed as CUDA graphs (``diagnostics.cuda_graph``) give what the
eager pass gives. The CUDA tests run where a GPU is (``bench/gpu_diagnostics_check.sh``
runs this file on a lent GPU machine); on a CPU the pass must stay eager."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.config import RunConfig
from sphere_engine.diagnostics.batched_finish import finish_steps
from sphere_engine.diagnostics.cuda_graph import GraphedPass
from sphere_engine.diagnostics.step_transfer import StepStatistics
from sphere_engine.diagnostics.tracked_samples import tracked_embedder
from sphere_engine.losses.mining_record import MiningRecord
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import train_loop
from sphere_engine.training.measurement import NO_MINING, batch_groups
from sphere_engine.training.precision import build_precision
from sphere_engine.training.setup import prepare_training
from sphere_engine.validation import validate

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def batch(seed: int, device: str, count: int = 32) -> tuple[torch.Tensor, ...]:
    """Embeddings, labels, gradients and a mining record's tensors of one batch."""
    generator = torch.Generator().manual_seed(seed)
    embeddings = torch.randn(count, 16, generator=generator) * 3
    labels = torch.arange(count) % 4
    gradients = torch.randn(count, 16, generator=generator)
    unit = torch.nn.functional.normalize(embeddings, dim=1)
    similarity = unit @ unit.T
    negative = labels[:, None] != labels[None, :]
    active = similarity > 0.1
    tensors = (embeddings, labels, gradients, active, negative, similarity, negative)
    return tuple(t.to(device) for t in tensors)


def finished(flat: torch.Tensor, groups: list) -> dict[str, float]:
    stats = StepStatistics()
    stats.add_flat(groups, flat.clone())
    return finish_steps([stats.transfer()])[0]


def test_off_cuda_the_pass_runs_eagerly_and_captures_nothing() -> None:
    calls = []
    replayed = GraphedPass(lambda x: calls.append(1) or x * 2, name="test", warmup_calls=0)
    for _ in range(3):
        assert torch.equal(replayed(torch.ones(3)), torch.full((3,), 2.0))
    assert calls == [1, 1, 1] and replayed.captured == 0 and not replayed.failed


def test_batch_groups_without_mining_has_only_the_batch_group() -> None:
    embeddings, labels, gradients, *_ = batch(0, "cpu")
    flat, groups = batch_groups(embeddings, labels, gradients, *NO_MINING)
    assert len(groups) == 1 and flat.numel() == groups[0].size


@cuda
def test_a_replayed_batch_pass_gives_the_eager_values_for_every_new_batch() -> None:
    replayed = GraphedPass(batch_groups, name="test")
    for seed in range(5):
        inputs = batch(seed, "cuda")
        flat, groups = replayed(*inputs)
        values = finished(flat, groups)
        expected = finished(*batch_groups(*inputs))
        assert values.keys() == expected.keys()
        for name, value in expected.items():
            assert np.isclose(values[name], value, rtol=1e-5, atol=1e-6, equal_nan=True), name
    assert replayed.captured == 1 and not replayed.failed
    # another batch size is another layout: its own graph, still the eager values
    inputs = batch(9, "cuda", count=24)
    for _ in range(3):
        flat, groups = replayed(*inputs)
    assert finished(flat, groups) == pytest.approx(finished(*batch_groups(*inputs)), nan_ok=True)
    assert replayed.captured == 2


@cuda
def test_the_replayed_tracked_pass_embeds_with_the_current_weights() -> None:
    from sphere_engine.tv_compat import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=8).cuda().to(memory_format=torch.channels_last)
    inputs = torch.randn(4, 3, 64, 64, device="cuda").contiguous(memory_format=torch.channels_last)
    autocast = build_precision("bf16", torch.device("cuda")).autocast
    graphed = tracked_embedder(model, autocast, graphed=True)
    eager = tracked_embedder(model, autocast)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(4):  # warm-up, capture, replays: each after an update of the weights
        first = graphed(inputs)
        assert torch.allclose(first.float(), eager(inputs).float(), rtol=2e-2, atol=2e-2)
        model(torch.randn(8, 3, 64, 64, device="cuda")).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
    assert not torch.allclose(first.float(), graphed(inputs).float())  # the weights moved
    assert model.training  # the pass's eval mode does not leak


@cuda
def test_a_gpu_run_logs_the_same_diagnostics_with_and_without_graphs() -> None:
    """The graphs change how the statistics are launched, not what they are: two runs
    of the same seed, one with graphs and one without, log the same values."""
    logged = {}
    for graphs in (True, False):
        config = RunConfig.from_dict(
            {
                "data": {"name": "digits", "batch_size": 40, "samples_per_class": 8},
                "model": {"name": "mlp", "embedding_dim": 32},
                "objective": {"kind": "loss", "name": "multi_similarity"},
                "optimizer": {"name": "adam", "lr": 1e-3},
                "training": {"steps": 30, "device": "cuda", "amp": "bf16"},
                "diagnostics": {"eval_every": 1000, "tracked_every": 3, "cuda_graphs": graphs},
            }
        )
        validate(config)
        setup = prepare_training(config)
        tracker = InMemoryTracker()
        train_loop(setup, tracker)
        if graphs:
            assert setup.batch_pass.captured == 1 and not setup.batch_pass.failed
        logged[graphs] = {
            (step, name): value
            for step, name, value, _ in tracker.scalars
            if not name.startswith("time/")  # the step's duration and throughput
        }
    assert logged[True].keys() == logged[False].keys()
    assert any(name.startswith("mining/neg_sim_hist") for _, name in logged[True])
    for key, value in logged[False].items():
        assert np.isclose(logged[True][key], value, rtol=1e-4, atol=1e-5, equal_nan=True), key


def test_a_mining_record_round_trips_through_its_tensors() -> None:
    tensors = batch(1, "cpu")[3:]
    record = MiningRecord(*tensors)
    copied = MiningRecord(*record.tensors()).tensors()
    assert all(a is b for a, b in zip(copied, tensors, strict=True))
