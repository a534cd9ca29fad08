from collections import Counter
from itertools import islice

import numpy as np
import pytest

from sphere_engine.data import PKBatchSampler

LABELS = np.repeat(np.arange(6), [8, 8, 8, 8, 8, 2])  # class 5 has fewer than K samples


def _batches(sampler, n):
    return list(islice(iter(sampler), n))


def test_each_batch_has_p_distinct_classes_with_k_samples_each():
    sampler = PKBatchSampler(LABELS, batch_size=12, samples_per_class=4, seed=0)
    for batch in _batches(sampler, 50):
        assert len(batch) == 12
        counts = Counter(LABELS[batch].tolist())
        assert len(counts) == 3
        assert set(counts.values()) == {4}
        # Grouped by class, K indices at a time.
        blocks = LABELS[batch].reshape(3, 4)
        assert (blocks == blocks[:, :1]).all()


def test_no_repeats_within_a_class_that_has_k_samples():
    sampler = PKBatchSampler(LABELS, batch_size=8, samples_per_class=4, seed=1)
    for batch in _batches(sampler, 50):
        for c, block in zip(LABELS[batch][::4], np.reshape(batch, (2, 4)), strict=True):
            if c != 5:
                assert len(set(block.tolist())) == 4


def test_small_class_is_sampled_with_replacement():
    sampler = PKBatchSampler(LABELS, batch_size=24, samples_per_class=4, seed=0)
    batch = next(iter(sampler))
    small = [i for i in batch if LABELS[i] == 5]
    assert len(small) == 4
    assert set(small) <= {40, 41}


def test_classes_and_samples_are_covered_evenly():
    sampler = PKBatchSampler(LABELS[:40], batch_size=8, samples_per_class=4, seed=2)
    batches = _batches(sampler, 10)  # 80 indices: each of 40 samples exactly twice
    counts = Counter(i for batch in batches for i in batch)
    assert set(counts.values()) == {2}
    assert len(counts) == 40


def test_deterministic_per_seed_and_restartable():
    a = _batches(PKBatchSampler(LABELS, 12, 4, seed=5), 20)
    b = _batches(PKBatchSampler(LABELS, 12, 4, seed=5), 20)
    c = _batches(PKBatchSampler(LABELS, 12, 4, seed=6), 20)
    assert a == b
    assert a != c
    sampler = PKBatchSampler(LABELS, 12, 4, seed=5)
    assert _batches(sampler, 3) == _batches(sampler, 3) == a[:3]


def test_all_classes_in_one_batch():
    batch = next(iter(PKBatchSampler(LABELS, batch_size=12, samples_per_class=2, seed=0)))
    assert sorted(set(LABELS[batch].tolist())) == list(range(6))


def test_too_many_classes_per_batch():
    with pytest.raises(ValueError, match="8 classes per batch, but the data has only 6"):
        PKBatchSampler(LABELS, batch_size=32, samples_per_class=4)


def test_batch_must_be_multiple_of_k():
    with pytest.raises(ValueError, match="batch_size: 10 must be a positive multiple of"):
        PKBatchSampler(LABELS, batch_size=10, samples_per_class=4)


def test_k_must_be_positive():
    with pytest.raises(ValueError, match="samples_per_class: 0 must be >= 1"):
        PKBatchSampler(LABELS, batch_size=8, samples_per_class=0)
