from collections import Counter
from itertools import islice

import pytest

from sphere_engine.data import ShuffledBatchSampler


def test_every_sample_once_per_epoch_with_full_batches():
    batches = list(islice(iter(ShuffledBatchSampler(10, batch_size=4, seed=0)), 5))
    assert all(len(batch) == 4 for batch in batches)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat[:10]) == list(range(10))
    assert sorted(flat[10:20]) == list(range(10))
    assert Counter(flat)[0] == 2


def test_deterministic_per_seed():
    first = list(islice(iter(ShuffledBatchSampler(50, 8, seed=1)), 3))
    again = list(islice(iter(ShuffledBatchSampler(50, 8, seed=1)), 3))
    other = list(islice(iter(ShuffledBatchSampler(50, 8, seed=2)), 3))
    assert first == again
    assert first != other


def test_batch_larger_than_dataset_still_fills():
    batch = next(iter(ShuffledBatchSampler(3, batch_size=7, seed=0)))
    assert len(batch) == 7
    assert set(batch) == {0, 1, 2}


@pytest.mark.parametrize(
    ("num_samples", "batch_size", "field"), [(0, 4, "num_samples"), (4, 0, "batch_size")]
)
def test_bad_sizes(num_samples, batch_size, field):
    with pytest.raises(ValueError, match=f"{field}: 0 must be >= 1"):
        ShuffledBatchSampler(num_samples, batch_size)
