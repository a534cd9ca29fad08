"""The projector's data: one snapshot projected by a method, cached (a UMAP or t-SNE
takes seconds to minutes, so it runs once per snapshot, method and space, not on
every rerun of the page), sampled to at most ``SAMPLE_CAP`` points."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import streamlit as st

from app.data.cache import SLOW_LIVE_TTL, STATIC_TTL, store_read
from app.data.reads import snapshot, snapshot_coordinates
from app.projection_methods import project

if TYPE_CHECKING:
    from db.store import RunStore

#: Points projected by default: UMAP and t-SNE grow faster than linearly with N.
SAMPLE_CAP = 10_000
#: The hover's images travel inside the chart's data: at most this many bytes of them
#: (2,000 digits take ~0.5 MB; large photos stop short and the rest show no image).
HOVER_IMAGE_BYTES = 4_000_000
#: The hover's pictures are at least this many pixels a side: an 8×8 digit drawn at its
#: own size was a speck.
HOVER_IMAGE_PX = 64
#: A transparent pixel for the points without an image: vega-tooltip would draw a
#: missing "image" value as a broken picture.
NO_IMAGE = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR4nGNgYAAAAAMA"
    "AbitOmMAAAAASUVORK5CYII="
)


@dataclass(frozen=True)
class Projection:
    points: pd.DataFrame  # x, y, label, norm, point
    total: int  # embeddings in the snapshot

    @property
    def sampled(self) -> bool:
        return len(self.points) < self.total

    def note(self) -> str:
        """What was projected: all points, or a seeded sample of them."""
        if self.sampled:
            return (
                f"Sampled {len(self.points):,} of {self.total:,} embeddings (a seeded uniform "
                f"sample; the cap is {SAMPLE_CAP:,})."
            )
        return f"All {self.total:,} embeddings."


@st.cache_data(ttl=STATIC_TTL, max_entries=32, show_spinner="Projecting the embeddings…")
def projection(
    run_id: str, step: int, method: str, on_sphere: bool, cap: int = SAMPLE_CAP
) -> Projection:
    frame = snapshot(run_id, step)
    total = len(frame)
    if total > cap:
        keep = np.sort(np.random.default_rng(0).permutation(total)[:cap])
        frame = frame.iloc[keep]
    xy = project(snapshot_coordinates(frame), method, on_sphere=on_sphere)
    points = pd.DataFrame(
        {
            "x": xy[:, 0],
            "y": xy[:, 1],
            "label": frame["label"].to_numpy(),
            "norm": frame["norm"].to_numpy(),
            "point": frame["point"].to_numpy() if "point" in frame else np.arange(len(frame)),
        }
    )
    return Projection(points, total)


@store_read(SLOW_LIVE_TTL)
def point_images(
    store: RunStore, run_id: str, step: int, points: tuple[int, ...]
) -> dict[int, str]:
    """Snapshot point → its sample's thumbnail as a data URI (``db.thumbnails``), for
    the points whose sample has one, within ``HOVER_IMAGE_BYTES``."""
    import base64

    from db import thumbnails

    samples = thumbnails.snapshot_samples(store, run_id, step)
    if samples is None:
        return {}
    wanted = {p: int(samples[p]) for p in points if 0 <= p < len(samples)}
    pngs = thumbnails.thumbnails(store, run_id, tuple(sorted(set(wanted.values()))))
    images, size = {}, 0
    for point, sample in wanted.items():
        if sample not in pngs:
            continue
        png = thumbnails.upscaled_png(pngs[sample], HOVER_IMAGE_PX)
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        size += len(uri)
        if size > HOVER_IMAGE_BYTES:
            break
        images[point] = uri
    return images
