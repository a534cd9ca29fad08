"""The §7 evaluations as training runs them (sphere_engine.evaluation + evaluation_extras)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.config import RunConfig
from sphere_engine.data import create_dataset
from sphere_engine.evaluation.extras import PixelModel, query_mask
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training


def _run(objective: dict, split: str, **sections: dict) -> InMemoryTracker:
    data = {"name": "digits", "split": split, "batch_size": 20, "samples_per_class": 4}
    if objective.get("name") == "ntxent":
        data["samples_per_class"] = 0
    config = {
        "data": data,
        "model": {"name": "mlp", "embedding_dim": 9},
        "objective": objective,
        "training": {"steps": 4, "seed": 0},
        "diagnostics": {"eval_every": 2, "eval_max_samples": 200, "tracked_samples": 0},
    }
    for name, values in sections.items():
        config.setdefault(name, {}).update(values)
    tracker = InMemoryTracker()
    run_training(RunConfig.from_dict(config), tracker)
    return tracker


def _at(tracker: InMemoryTracker, step: int) -> dict[str, float]:
    return {name: value for s, name, value in tracker.evals if s == step}


def test_query_mask_is_seeded_and_keeps_both_sides() -> None:
    mask = query_mask(10, 0.3, seed=1)
    assert mask.sum() == 3 and np.array_equal(mask, query_mask(10, 0.3, seed=1))
    assert not np.array_equal(mask, query_mask(10, 0.3, seed=2))
    assert query_mask(3, 0.01, 0).sum() == 1 and query_mask(3, 0.99, 0).sum() == 2


def test_a_head_run_logs_verification_softmax_clustering_and_robustness_at_the_end() -> None:
    tracker = _run(
        {"kind": "head", "name": "linear"},
        "standard",
        robustness={"enabled": True, "max_samples": 500, "steps": 2, "epsilons": [0.0, 0.3]},
        diagnostics={"recall_ks": [1, 10]},
    )
    first, last = _at(tracker, 2), _at(tracker, 4)
    assert {"recall@1", "recall@10"} <= set(last) and "recall@2" not in last
    for key in ("verification/auc", "verification/tar@far=1e-3", "clustering/softmax_nmi"):
        assert key in first and key in last
    assert not any(k.startswith("robustness/") for k in first)  # only at the final one
    # ε = 0 is the clean accuracy of the same (here: all 200) evaluated samples
    assert last["robustness/fgsm/accuracy@eps=0"] == pytest.approx(last["classifier_accuracy"])
    assert last["robustness/pgd/accuracy@eps=0.3"] <= last["robustness/pgd/accuracy@eps=0"]
    assert [(step, name) for step, name, _, _ in tracker.curves] == [
        (2, "verification/roc"),
        (4, "verification/roc"),
    ]
    _, _, far, tar = tracker.curves[-1]
    assert len(far) == len(tar) > 1 and far == sorted(far) and far[0] > 0 and far[-1] == 1.0


def test_robustness_at_every_evaluation_and_recall_for_pair_losses() -> None:
    tracker = _run(
        {"kind": "loss", "name": "triplet"},
        "class_disjoint",
        robustness={"enabled": True, "attacks": ["fgsm"], "epsilons": [0.1],
                    "every_evaluation": True, "max_samples": 50},
        evaluation={"verification": False, "retrieval_protocol": "query_gallery",
                    "query_fraction": 0.25},
    )  # fmt: skip
    for step in (2, 4):
        values = _at(tracker, step)
        assert "robustness/fgsm/recall@1@eps=0.1" in values
        assert values["retrieval/queries"] + values["retrieval/queries_skipped"] == 50
    assert not any(k.startswith("verification/") for _, k, _ in tracker.evals)
    assert tracker.curves == []


@pytest.mark.parametrize(
    ("objective", "choice", "expected"),
    [
        ({"kind": "loss", "name": "ntxent"}, "auto", True),
        ({"kind": "loss", "name": "triplet"}, "auto", False),
        ({"kind": "loss", "name": "triplet"}, "on", True),
        ({"kind": "loss", "name": "ntxent"}, "off", False),
    ],
)
def test_linear_probe_runs_for_self_supervised_objectives_or_when_asked(
    objective: dict, choice: str, expected: bool
) -> None:
    tracker = _run(objective, "standard", evaluation={"linear_probe": choice})
    values = _at(tracker, 4)
    assert ("linear_probe/accuracy" in values) is expected
    if expected:
        assert 0.0 <= values["linear_probe/accuracy"] <= 1.0


@pytest.mark.parametrize("options", [{}, {"standardize": True}, {"as_image": True}])
def test_digits_declare_their_pixel_range(options: dict) -> None:
    splits = create_dataset("digits", split="standard", **options)
    assert splits.pixel_range is not None
    inputs, _ = splits.test.get_batch(torch.arange(50))
    pixels = splits.pixel_range.to_pixels(inputs)
    assert pixels.min() >= 0 and pixels.max() <= 1
    torch.testing.assert_close(splits.pixel_range.to_inputs(pixels), inputs, atol=1e-4, rtol=0)


def test_synthetic_data_has_no_pixel_range() -> None:
    assert create_dataset("synthetic", split="standard").pixel_range is None


def test_pixel_model_feeds_the_model_normalised_inputs() -> None:
    splits = create_dataset("digits", split="standard", standardize=True)
    model = torch.nn.Linear(64, 3)
    inputs, _ = splits.test.get_batch(torch.arange(8))
    wrapped = PixelModel(model, splits.pixel_range)
    pixels = splits.pixel_range.to_pixels(inputs)
    torch.testing.assert_close(wrapped(pixels), model(inputs), atol=1e-3, rtol=0)


def test_uint8_images_declare_their_normalisation_as_pixel_range() -> None:
    from sphere_engine.data import TensorData
    from sphere_engine.data.memory_splits import memory_splits

    images = torch.randint(0, 256, (6, 3, 4, 4), dtype=torch.uint8)
    part = TensorData(images, np.arange(6) % 2, mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3))
    splits = memory_splits(part, part, augment=lambda x: x)
    inputs, _ = part.get_batch(torch.arange(6))
    pixels = splits.pixel_range.to_pixels(inputs)
    torch.testing.assert_close(pixels, images.float() / 255, atol=1e-5, rtol=0)
