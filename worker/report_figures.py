"""The report's PNG figures (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display; must precede the pyplot import
    import matplotlib.pyplot as plt

    return plt


def gain_vs_drop(pairs: pd.DataFrame, r: float, n: int, path: Path) -> Path:
    """Scatter of the R@1 gain against log10(variance without / with SEC), a colour per
    loss; ``r``, ``n``: the Pearson correlation of exactly these points."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(5.5, 4.0), dpi=90)
    for name, group in pairs.groupby("pair", sort=False):
        axes.scatter(group["log_variance_ratio"], group["r1_gain"], label=name, s=28)
    axes.axhline(0, color="grey", linewidth=0.6)
    axes.set_xlabel("log10(training norm variance without SEC / with SEC)")
    axes.set_ylabel("R@1 gain with SEC (points)")
    axes.set_title(f"gain vs variance drop: Pearson r = {r:.2f} (n = {n})")
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def scatter_matrix(
    embeddings: np.ndarray, labels: np.ndarray, dims: int, title: str, path: Path
) -> Path:
    """Pairwise scatter plots of the first ``dims`` normalised feature coordinates,
    coloured by class (RePoNets' ∧ / + / × shapes)."""
    plt = _pyplot()
    dims = min(dims, embeddings.shape[1], 5)  # more panels are unreadable
    keep = np.random.default_rng(0).permutation(len(labels))[:1000]  # keeps the PNG small
    embeddings, labels = embeddings[keep], labels[keep]
    unit = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
    figure, grid = plt.subplots(dims, dims, figsize=(1.7 * dims, 1.7 * dims), dpi=60)
    grid = np.atleast_2d(grid)
    for row in range(dims):
        for col in range(dims):
            axes = grid[row, col]
            axes.set_xticks([])
            axes.set_yticks([])
            if row == col:
                axes.hist(unit[:, col], bins=30, color="grey")
                continue
            axes.scatter(unit[:, col], unit[:, row], c=labels, cmap="tab10", s=1.0, alpha=0.7)
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path
