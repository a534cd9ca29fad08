"""Bad input fails with a clear ValueError before any computation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.metrics import evaluate_embeddings

GOOD_X = np.random.default_rng(0).normal(size=(12, 4)).astype(np.float32)
GOOD_Y = np.repeat([0, 1, 2], 4)


def with_value(row, column, value):
    x = GOOD_X.copy()
    x[row, column] = value
    return x


@pytest.mark.parametrize(
    ("embeddings", "labels", "message"),
    [
        (with_value(3, 1, np.nan), GOOD_Y, "NaN or inf in 1 row.*first at row 3"),
        (with_value(5, 0, np.inf), GOOD_Y, "NaN or inf"),
        (GOOD_X, GOOD_Y[:-1], "11 entries but the embeddings have 12 rows"),
        (GOOD_X, np.zeros(12, int), "at least 2 distinct classes; got 1"),
        (GOOD_X[:, 0], GOOD_Y, r"must be 2-D .*got shape \(12,\)"),
        (GOOD_X, GOOD_Y[:, None], r"labels must be 1-D"),
        (GOOD_X, GOOD_Y + 0.5, "integer class ids"),
        (GOOD_X, np.array(["a", "b", "c"] * 4), "integer class ids"),
        (np.array([["a", "b"]] * 12), GOOD_Y, "must be numeric"),
        (np.zeros((0, 4)), [], "non-empty"),
        (with_value(slice(None), slice(None), 0.0)[:3].repeat(4, 0), GOOD_Y, "zero vector"),
    ],
)
def test_bad_embeddings_and_labels(embeddings, labels, message):
    with pytest.raises(ValueError, match=message):
        evaluate_embeddings(embeddings, labels)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ks": (1, -2)}, "ks must be positive integers"),
        ({"ks": ()}, "ks must be positive integers"),
        ({"backend": "cuda"}, "backend must be one of"),
        ({"reference_labels": GOOD_Y}, "given together"),
        ({"reference": GOOD_X[:, :3], "reference_labels": GOOD_Y}, "dimension 3"),
        ({"reference": GOOD_X, "reference_labels": GOOD_Y[:5]}, "reference_labels has 5"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        evaluate_embeddings(GOOD_X, GOOD_Y, **options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reference": GOOD_X}, "reference and reference_labels must be given together"),
        ({"reference_labels": GOOD_Y}, "reference and reference_labels must be given together"),
        (
            {"reference": GOOD_X[:, :3], "reference_labels": GOOD_Y},
            "reference has dimension 3 and the embeddings dimension 4; they must match",
        ),
    ],
)
@pytest.mark.parametrize("entry", ["evaluate_embeddings", "retrieval_metrics", "external"])
def test_every_entry_checks_the_reference_the_same_way(entry, options, message):
    from sphere_engine.evaluation.external import evaluate_external
    from sphere_engine.metrics import retrieval_metrics

    call = {
        "evaluate_embeddings": evaluate_embeddings,
        "retrieval_metrics": retrieval_metrics,
        "external": evaluate_external,
    }[entry]
    with pytest.raises(ValueError, match=message):
        call(GOOD_X, GOOD_Y, **options)


def test_integer_valued_float_labels_and_half_tensors_are_accepted():
    result = evaluate_embeddings(torch.from_numpy(GOOD_X).half(), GOOD_Y.astype(float))
    assert result["retrieval/queries"] == 12
