from itertools import islice

import numpy as np
import torch
from PIL import Image

from sphere_engine.data import (
    PKBatchSampler,
    ShuffledBatchSampler,
    batch_sampler,
    create_dataset,
    iter_batches,
)


def test_sampler_choice():
    labels = np.repeat(np.arange(4), 5)
    assert isinstance(batch_sampler(labels, 8, 0, 0), ShuffledBatchSampler)
    assert isinstance(batch_sampler(labels, 8, 2, 0), PKBatchSampler)


def test_in_memory_batches_come_from_get_batch():
    train = create_dataset("digits").train
    stream = iter_batches(train, batch_size=20, samples_per_class=4, seed=0)
    for x, y, indices in islice(stream, 5):
        assert x.shape == (20, 64)
        assert indices.dtype == torch.int64
        assert y.tolist() == train.labels[indices.numpy()].tolist()
        assert torch.equal(x, train.x[indices])
        assert len(set(y.tolist())) == 5


def test_stream_is_infinite_and_deterministic():
    train = create_dataset("synthetic", num_classes=4, samples_per_class=6).train
    a = [i.tolist() for _, _, i in islice(iter_batches(train, 4, 0, seed=3), 30)]
    b = [i.tolist() for _, _, i in islice(iter_batches(train, 4, 0, seed=3), 30)]
    assert a == b
    assert len(a) == 30  # far more than one epoch of 12 samples


def test_dataset_without_get_batch_goes_through_a_dataloader(tmp_path):
    for c in range(3):
        (tmp_path / f"class{c}").mkdir()
        for i in range(4):
            Image.new("L", (9, 9), 40 * c + i).save(tmp_path / f"class{c}" / f"{i}.png")
    train = create_dataset("image_folder", root=str(tmp_path), split="standard", image_size=8).train
    x, y, indices = next(iter_batches(train, batch_size=4, samples_per_class=2, seed=0))
    assert x.shape == (4, 3, 8, 8)
    assert y.tolist() == train.labels[indices.numpy()].tolist()
    assert y[0] == y[1] and y[2] == y[3] and y[0] != y[2]


def _noise_image_tree(root, classes: int, per_class: int, seed: int):
    """Random 10-px PNGs in a class-per-folder tree; its ``image_folder`` data at 8 px."""
    rng = np.random.default_rng(seed)
    for c in range(classes):
        (root / f"class{c}").mkdir()
        for i in range(per_class):
            pixels = rng.integers(0, 255, (10, 10, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / f"class{c}" / f"{i}.png")
    return create_dataset("image_folder", root=str(root), split="standard", image_size=8)


def test_image_files_cross_the_loader_as_uint8_and_arrive_normalised(tmp_path):
    """Workers send uint8 pixels (a quarter of float32's bytes); the batch is normalised
    after its move, equal to the dataset's own normalised items."""
    train = _noise_image_tree(tmp_path, classes=2, per_class=4, seed=0).train
    shipped = []
    original_pixels = train.pixels
    train.pixels = lambda index: shipped.append(original_pixels(index)) or shipped[-1]
    stream = iter_batches(train, 4, 2, seed=0, device="cpu", pixels_to_device=True)
    x, _, indices = next(stream)
    assert [p.dtype for p in shipped] == [torch.uint8] * 4
    assert x.dtype == torch.float32
    expected = torch.stack([train[int(i)][0] for i in indices])
    torch.testing.assert_close(x, expected, atol=1e-6, rtol=0)
    assert float(expected.min()) < -1.0 and float(expected.max()) > 1.0  # not pixels in [0, 1]
    # by default only towards an accelerator: on a CPU the workers send normalised items
    from sphere_engine.data.batches import pixels_travel

    assert [pixels_travel(d, None) for d in ("cpu", None, "cuda")] == [False, False, True]
    x_cpu, _, _ = next(iter_batches(train, 4, 2, seed=0, device="cpu"))
    torch.testing.assert_close(x_cpu, expected, atol=1e-6, rtol=0)


def test_evaluation_inputs_are_decoded_by_workers_in_order(tmp_path):
    """An evaluation's embedding pass over image files: loader processes decode them,
    in the order asked, equal to the samples decoded one by one."""
    from sphere_engine.data.batches import gather_inputs, iter_inputs

    test = _noise_image_tree(tmp_path, classes=3, per_class=7, seed=1).test
    order = np.random.default_rng(2).permutation(len(test))
    assert len(order) >= 5
    chunks = list(iter_inputs(test, order, batch_size=2, num_workers=2, pixels_to_device=True))
    assert [len(chunk) for chunk in chunks] == [2] * (len(order) // 2) + [1] * (len(order) % 2)
    torch.testing.assert_close(torch.cat(chunks), gather_inputs(test, order), atol=1e-6, rtol=0)
