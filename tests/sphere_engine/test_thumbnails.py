"""Thumbnails of the samples the explorer shows, drawn at evaluation from the test
split's own pixels (``sphere_engine/evaluation/thumbnails.py``)."""

from __future__ import annotations

import numpy as np
import torch

from sphere_engine.config import RunConfig
from sphere_engine.data import create_dataset
from sphere_engine.data.dataset_splits import PixelRange
from sphere_engine.evaluation.evaluator import Evaluator
from sphere_engine.evaluation.thumbnails import (
    THUMBNAIL_SIDE,
    image_shape,
    shown_rows,
    to_thumbnails,
)
from sphere_engine.tracking import InMemoryTracker


def test_shown_rows_are_the_worst_queries_of_both_orders_and_their_neighbours() -> None:
    queries = {
        "query": np.array([10, 11, 12, 13]),
        "hit@1": np.array([True, False, True, True]),
        "ap@r": np.array([0.2, 0.9, 0.5, 1.0]),
        "neighbors": np.array([[20, 21], [22, 23], [24, 25], [26, 27]]),
    }
    # by R@1: 11 (the miss), then 10 (lowest AP); by AP@R: 10, then 12
    assert shown_rows(queries, count=2).tolist() == [10, 11, 12, 20, 21, 22, 23, 24, 25]
    assert shown_rows({**queries, "query": np.zeros(0, np.int64)}).size == 0


def test_image_shape_needs_one_or_three_channels() -> None:
    assert image_shape((64,), (1, 8, 8)) == (1, 8, 8)
    assert image_shape((3, 32, 32), None) == (3, 32, 32)
    assert image_shape((64,), None) is None  # a synthetic vector: no image
    assert image_shape((5, 8, 8), None) is None


def test_large_images_are_shrunk_and_pixels_are_recovered() -> None:
    mean, std = (0.5, 0.4, 0.3), (0.2, 0.25, 0.3)
    pixels = torch.rand(2, 3, 224, 160)
    pixel_range = PixelRange.of(mean, std)
    images = to_thumbnails(pixel_range.to_inputs(pixels), pixel_range, (3, 224, 160))
    assert images.dtype == np.uint8 and images.shape == (2, THUMBNAIL_SIDE, 46, 3)
    small = torch.rand(1, 3, 32, 32)
    drawn = to_thumbnails(pixel_range.to_inputs(small), pixel_range, (3, 32, 32))
    expected = (small[0].permute(1, 2, 0).numpy() * 255).round()
    assert np.abs(drawn[0].astype(float) - expected).max() <= 1  # float rounding only


def test_an_evaluation_draws_the_shown_digits_and_the_snapshots_once() -> None:
    config = RunConfig.from_dict(
        {
            "data": {"name": "digits"},
            "model": {"name": "mlp", "embedding_dim": 8},
            "diagnostics": {"eval_max_samples": 120, "snapshot_size": 30},
        }
    )
    splits = create_dataset("digits", seed=0)
    evaluator = Evaluator(splits, config, torch.device("cpu"))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 8)).eval()
    tracker = InMemoryTracker()
    evaluator.evaluate(model, None, tracker, step=5)
    results = tracker.query_results[0][1]
    rows = shown_rows(results.queries)
    # the explorer names the class-disjoint test classes by their digits, not 0-4
    assert set(results.classes["class_name"]) == {"5", "6", "7", "8", "9"}
    # the explorer's rows and the snapshot's points (the projector's hover), each once
    assert sorted(tracker.thumbnails) == np.union1d(rows, evaluator.snapshot_rows).tolist()
    assert tracker.snapshot_samples == {5: evaluator.snapshot_rows.tolist()}
    # each thumbnail is the digit itself: the test sample's 8×8 pixels in [0, 255]
    for row in rows[:5]:
        sample = splits.test.x[evaluator.indices[row]].reshape(8, 8).numpy()
        assert tracker.thumbnails[int(row)].shape == (8, 8, 1)
        np.testing.assert_array_equal(
            tracker.thumbnails[int(row)][:, :, 0], np.round(sample * 255).astype(np.uint8)
        )
    # with norms: each kept query's and its neighbours' raw norms
    embeddings = model(splits.test.x[evaluator.indices]).detach().numpy()
    norms = np.linalg.norm(embeddings, axis=1)
    np.testing.assert_allclose(results.queries["norm"], norms[results.queries["query"]], 1e-5)
    np.testing.assert_allclose(
        results.queries["neighbor_norms"], norms[results.queries["neighbors"]], 1e-5
    )
    drawn = len(tracker.thumbnails)
    evaluator.evaluate(model, None, InMemoryTracker(), step=10)  # the same rows: none again
    second = InMemoryTracker()
    evaluator.evaluate(model, None, second, step=15)
    assert second.thumbnails == {} and drawn > 0


def test_vectors_without_pixels_get_no_thumbnails() -> None:
    config = RunConfig.from_dict(
        {"data": {"name": "synthetic"}, "model": {"name": "mlp", "embedding_dim": 8}}
    )
    splits = create_dataset("synthetic", seed=0)
    assert splits.pixel_range is None  # points, not pictures
    evaluator = Evaluator(splits, config, torch.device("cpu"))
    model = torch.nn.Linear(splits.input_shape[0], 8)
    tracker = InMemoryTracker()
    evaluator.evaluate(model, None, tracker, step=1)
    assert tracker.query_results and tracker.thumbnails == {}
