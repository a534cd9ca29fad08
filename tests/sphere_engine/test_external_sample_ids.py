"""Sample ids given to the SDK's evaluation as a tensor stay integer ids (the gathered
evaluation of a data-parallel job hands them over as an int64 tensor)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sphere_engine.evaluation.external import sample_id_array


@pytest.mark.parametrize(
    "ids", [torch.tensor([7, 3, 2**40]), np.array([7, 3, 2**40]), [7, 3, 2**40]]
)
def test_integer_ids_of_any_kind_are_kept_exactly(ids) -> None:
    got = sample_id_array(ids, 3)
    assert got.dtype == np.int64
    assert got.tolist() == [7, 3, 2**40]


def test_fractional_ids_are_refused_in_one_line_and_whole_floats_kept() -> None:
    with pytest.raises(ValueError, match="sample_ids must be 2 integer ids"):
        sample_id_array(torch.tensor([1.5, 2.0]), 2)
    # a user's float tensor of whole numbers names samples as well as an integer one
    assert sample_id_array(torch.tensor([1.0, 2.0]), 2).tolist() == [1, 2]
