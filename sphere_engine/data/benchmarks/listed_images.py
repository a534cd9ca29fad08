"""Every image a benchmark's lists name must be in the tree: checked when the lists are
read (at launch, through ``dataset_info``), so a partly extracted archive is refused
with the first missing paths instead of failing mid-run on the first batch that needs
one of them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sphere_engine.config.config_error import ConfigError

SHOWN = 3  # missing paths named in the message


def check_listed_images(root: Path, paths: Sequence[Path], lists: str) -> None:
    """``ConfigError`` on ``data.root`` naming how many of ``paths`` (listed in
    ``lists``) are missing and the first ``SHOWN`` of them, relative to ``root``."""
    missing = [path for path in paths if not path.is_file()]
    if not missing:
        return
    shown = ", ".join(_relative(path, root) for path in missing[:SHOWN])
    more = f" (and {len(missing) - SHOWN} more)" if len(missing) > SHOWN else ""
    raise ConfigError(
        "data.root",
        f"{len(missing)} of the {len(paths)} images listed in {lists} "
        f"{'is' if len(missing) == 1 else 'are'} missing under {str(root)!r}: "
        f"{shown}{more}; extract the whole archive there",
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
