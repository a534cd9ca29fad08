"""``Run.log_samples`` and ``evaluate``'s per-query results: the explorer shows an SDK
run's queries by the user's sample ids, with the images logged for them."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

import spherescope
from db.query_results import evaluation_steps, query_results
from db.store import RunStore
from db.thumbnails import has_thumbnails, snapshot_samples, thumbnails
from sphere_engine.evaluation.external import snapshot_rows


def test_evaluate_keeps_each_query_by_sample_id_and_the_logged_images(store: RunStore) -> None:
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 10)
    embeddings = rng.normal(size=(40, 6)) + 2.0 * np.eye(6)[labels]
    ids = np.arange(40) * 10 + 1000  # the user's own ids, not row numbers
    images = torch.randint(0, 256, (40, 3, 16, 12), dtype=torch.uint8)  # N × C × H × W
    with spherescope.init(name="sdk explorer") as run:
        run.log_samples(ids, images)
        run.evaluate(torch.from_numpy(embeddings).float(), labels, step=7, sample_ids=ids)
    assert evaluation_steps(store, run.id) == [7]
    rows = query_results(store, run.id, 7)
    assert set(rows["query"]) == set(ids.tolist())
    assert set(np.concatenate(rows["neighbors"].to_list())) <= set(ids.tolist())
    first = rows.iloc[0]
    position = (ids == first["query"]).nonzero()[0][0]
    assert first["norm"] == pytest.approx(np.linalg.norm(embeddings[position]), rel=1e-5)
    stored = thumbnails(store, run.id, [int(first["query"]), 5])
    assert list(stored) == [int(first["query"])]  # id 5 has no image
    picture = np.asarray(Image.open(io.BytesIO(stored[int(first["query"])])))
    np.testing.assert_array_equal(picture, images[position].permute(1, 2, 0).numpy())
    # the snapshot's points by sample id: the projector's hover finds their images
    np.testing.assert_array_equal(snapshot_samples(store, run.id, 7), ids[snapshot_rows(40, 2000)])


def test_evaluate_without_sample_ids_numbers_the_rows(store: RunStore) -> None:
    labels = np.repeat(np.arange(3), 5)
    embeddings = np.random.default_rng(1).normal(size=(15, 4))
    with spherescope.init(name="rows") as run:
        run.evaluate(embeddings, labels, step=1)
    assert sorted(query_results(store, run.id, 1)["query"]) == list(range(15))


def test_bad_images_are_refused_in_one_line_and_the_run_goes_on(store: RunStore) -> None:
    with spherescope.init(name="bad images") as run:
        with pytest.raises(ValueError, match="log_samples: images must be uint8"):
            run.log_samples([1, 2], np.zeros((2, 8, 8), dtype=np.float32))
        with pytest.raises(ValueError, match="log_samples: samples must be a 1-D array"):
            run.log_samples([[1, 2]], np.zeros((2, 8, 8), dtype=np.uint8))
        run.log({"loss": 1.0}, step=1)
    assert not has_thumbnails(store, run.id)
