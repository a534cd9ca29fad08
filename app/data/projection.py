"""The projector's data: one snapshot projected by a method, cached (a UMAP or t-SNE
takes seconds to minutes, so it runs once per snapshot, method and space, not on
every rerun of the page), sampled to at most ``SAMPLE_CAP`` points."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from app.data.cache import STATIC_TTL
from app.data.reads import snapshot, snapshot_coordinates
from app.projection_methods import project

#: Points projected by default: UMAP and t-SNE grow faster than linearly with N.
SAMPLE_CAP = 10_000


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
