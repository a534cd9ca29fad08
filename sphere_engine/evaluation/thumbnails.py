"""Small images of the evaluated samples the dashboard shows (the explorer's strips).

At each evaluation the rows the retrieval explorer lists (the ``WORST_QUERIES`` worst
queries in each of ``WORST_QUERY_ORDERS``, and their neighbours) are drawn from the
test split's own inputs: model inputs → pixels through the dataset's ``PixelRange``,
shrunk to at most ``THUMBNAIL_SIDE`` pixels a side, uint8 (n, H, W, C). The store
keeps them as PNGs keyed by evaluated row (``db.thumbnails``), so the app shows them
without torch or the dataset. Datasets without pixels (synthetic vectors) have none.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
import torch.nn.functional as F

from sphere_engine.catalogue.facts import WORST_QUERIES, WORST_QUERY_ORDERS
from sphere_engine.data.dataset_splits import PixelRange

THUMBNAIL_SIDE = 64  # pixels on the longer side; CIFAR's 32 and digits' 8 stay as they are


def shown_rows(queries: Mapping[str, np.ndarray], count: int = WORST_QUERIES) -> np.ndarray:
    """Evaluated rows the explorer shows: the ``count`` worst queries in each order of
    ``WORST_QUERY_ORDERS`` (as the explorer sorts them) and all their neighbours."""
    ids = np.asarray(queries["query"], dtype=np.int64)
    if not ids.size:
        return ids
    picked = []
    for first, second in WORST_QUERY_ORDERS.values():
        # np.lexsort sorts by its last key first: (first, second, query id) ascending
        order = np.lexsort((ids, np.asarray(queries[second]), np.asarray(queries[first])))
        picked.append(order[:count])
    rows = np.unique(np.concatenate(picked))
    neighbours = np.asarray(queries["neighbors"], dtype=np.int64)[rows].reshape(-1)
    return np.unique(np.concatenate([ids[rows], neighbours]))


def image_shape(input_shape: tuple[int, ...], declared: tuple[int, ...] | None) -> tuple | None:
    """The (C, H, W) samples are drawn as, or None when they are not images."""
    shape = tuple(declared or input_shape)
    if len(shape) != 3 or shape[0] not in (1, 3):
        return None
    return shape


def to_thumbnails(
    inputs: torch.Tensor, pixel_range: PixelRange, shape: tuple[int, ...]
) -> np.ndarray:
    """Model inputs (n, *input shape) → uint8 thumbnails (n, h, w, C), h, w ≤ THUMBNAIL_SIDE."""
    pixels = pixel_range.to_pixels(inputs.detach().float().cpu()).reshape(len(inputs), *shape)
    height, width = shape[1:]
    scale = THUMBNAIL_SIDE / max(height, width)
    if scale < 1 and len(pixels):
        size = (max(1, round(height * scale)), max(1, round(width * scale)))
        pixels = F.interpolate(pixels, size=size, mode="area")  # averages: no aliasing
    return (pixels * 255).round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).numpy()
