"""db/thumbnails.py: small PNGs of a run's samples, keyed by sample id."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from db.thumbnails import has_thumbnails, thumbnails, write_thumbnails


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


def test_round_trip_grey_and_colour_and_newer_parts_win(store, config) -> None:
    run = store.create_run(config, "r")
    assert not has_thumbnails(store, run) and thumbnails(store, run, [1]) == {}
    grey = np.arange(2 * 8 * 8, dtype=np.uint8).reshape(2, 8, 8, 1)
    write_thumbnails(store, run, [3, 7], grey)
    colour = np.full((1, 4, 6, 3), 200, dtype=np.uint8)
    write_thumbnails(store, run, np.array([7]), colour)  # sample 7 drawn again
    found = thumbnails(store, run, [3, 7, 99])
    assert sorted(found) == [3, 7]  # 99 has none
    np.testing.assert_array_equal(pixels(found[3]), grey[0, :, :, 0])
    np.testing.assert_array_equal(pixels(found[7]), colour[0])
    assert has_thumbnails(store, run)


@pytest.mark.parametrize(
    ("samples", "images", "message"),
    [
        ([1, 2], np.zeros((2, 8, 8), np.float32), "images must be uint8"),
        ([1], np.zeros((2, 8, 8), np.uint8), "with n = 1 samples"),
        ([1], np.zeros((1, 8, 8, 4), np.uint8), "1 or 3 channels"),
        ([1], np.zeros((1, 300, 8), np.uint8), "at most 256 pixels"),
        (["a"], np.zeros((1, 8, 8), np.uint8), "integer ids"),
    ],
)
def test_bad_images_are_refused_in_one_line_and_nothing_is_written(
    store, config, samples, images, message
) -> None:
    run = store.create_run(config, "r")
    with pytest.raises(ValueError, match=message):
        write_thumbnails(store, run, samples, images)
    assert not has_thumbnails(store, run)


def test_an_unknown_run_is_refused(store) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        write_thumbnails(store, "nope", [1], np.zeros((1, 8, 8), np.uint8))
