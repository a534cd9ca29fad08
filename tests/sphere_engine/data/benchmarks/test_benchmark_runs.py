"""Research-scale runs end to end on tiny trees: benchmark layouts, pretrained weights,
mixed precision, channels_last, and tracked_samples = 0 on image files."""

from __future__ import annotations

import hashlib

import pytest
import torch
from benchmark_trees import image, inshop_tree

from sphere_engine.config import RunConfig
from sphere_engine.data import create_dataset
from sphere_engine.evaluation import Evaluator
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training
from sphere_engine.training.precision import build_precision
from sphere_engine.tv_compat import torchvision
from sphere_engine.validation import validate


def tiny_run(data: dict, **sections: dict) -> RunConfig:
    base: dict = {
        "data": {"batch_size": 4, "samples_per_class": 2, "num_workers": 0, **data},
        "model": {"name": "resnet18", "embedding_dim": 8},
        "training": {"steps": 2, "seed": 0},
        "diagnostics": {"eval_every": 1000, "eval_max_samples": 50, "snapshot_size": 10},
    }
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    config = RunConfig.from_dict(base)
    validate(config)
    return config


@pytest.mark.slow
def test_image_folder_run_without_tracked_samples(tmp_path):
    for cls in range(4):
        for k in range(3):
            image(tmp_path / f"class_{cls}" / f"{k}.png", cls * 10 + k)
    config = tiny_run(
        {"name": "image_folder", "root": str(tmp_path), "image_size": 16},
        diagnostics={"tracked_samples": 0},
    )
    tracker = InMemoryTracker()
    result = run_training(config, tracker)
    assert result.steps_completed == 2
    assert tracker.run_info["tracked_samples"] == []
    assert not tracker.sample_norms


@pytest.mark.slow
def test_inshop_run_from_pretrained_weights_in_bf16(tmp_path):
    root = inshop_tree(tmp_path / "inshop")
    torch.manual_seed(5)
    reference = torchvision.models.resnet18(weights=None)
    weights = tmp_path / "resnet18.pth"
    torch.save(reference.state_dict(), weights)
    config = tiny_run(
        {"name": "inshop", "root": str(root), "image_size": 16},
        model={"pretrained": str(weights), "options": {"small_input": False}},
        training={"amp": "bf16", "channels_last": True},
        evaluation={"retrieval_protocol": "query_gallery"},
        diagnostics={"recall_ks": [1, 2]},
        optimizer={"lr": 0.0, "head_lr": 1e-3},
    )
    tracker = InMemoryTracker()
    run_training(config, tracker)
    assert tracker.run_info["pretrained"] == {
        "file": str(weights.resolve()),
        "sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
    }
    assert tracker.run_info["class_names_test"] == ["id_00000004", "id_00000005"]
    # the ids the snapshot's labels carry, so the projector names them
    ids = tracker.run_info["class_ids_test"]
    assert len(ids) == 2 and set(tracker.snapshots[-1][2].tolist()) <= set(ids)
    assert any(name.startswith("recall@") for _, name, _ in tracker.evals)
    # the evaluation searched the official queries against the official gallery
    splits = create_dataset("inshop", root=str(root), image_size=16)
    evaluator = Evaluator(splits, config, torch.device("cpu"))
    assert evaluator.is_query.tolist() == splits.test.is_query[evaluator.indices].tolist()
    assert evaluator.is_query.tolist() == [True, False, False] * 2
    logged = {name for _, name, _, _ in tracker.scalars}
    assert {"grad/norm_mean", "norm/mean"} <= logged


def test_fp16_needs_cuda():
    with pytest.raises(ValueError, match=r"training\.amp: 'fp16' needs a CUDA device"):
        build_precision("fp16", torch.device("cpu"))
    bf16 = build_precision("bf16", torch.device("cpu"))
    with bf16.autocast():
        out = torch.nn.Linear(4, 2)(torch.randn(3, 4))
    assert out.dtype == torch.bfloat16
