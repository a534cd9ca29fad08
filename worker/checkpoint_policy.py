"""Where queued runs may write checkpoints: only under the run store (``SPHERESCOPE_HOME``).

A run launched from the dashboard (or anything else that enqueues) trains in a worker
as the product's user; a free ``training.checkpoint_dir`` would let anyone who can open
the dashboard write files anywhere that user can. ``spherescope train`` runs as the
person who typed it and keeps its freedom (it does not come through here).
"""

from __future__ import annotations

from pathlib import Path

from sphere_engine.config import RunConfig


def check_checkpoint_dir(config: RunConfig, home: Path) -> None:
    """``ValueError`` naming ``training.checkpoint_dir`` unless it is empty (the run's own
    folder) or an absolute path inside ``home`` (symbolic links and ``..`` resolved)."""
    raw = config.training.checkpoint_dir
    if not raw:
        return
    path = Path(raw).expanduser()
    root = Path(home).resolve()
    if not path.is_absolute() or not path.resolve().is_relative_to(root):
        raise ValueError(
            f"training.checkpoint_dir: {raw!r} is not inside SPHERESCOPE_HOME ({root}); "
            "launched runs write checkpoints only there (leave it empty for the run's folder)"
        )
