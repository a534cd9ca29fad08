"""Metrics the catalogue does not know (logged through the SDK with the user's own
names): every one is drawn, one chart per prefix (``acc/train`` and ``acc/val`` share
the ``acc`` chart), in their own tab of the Run page."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sphere_engine.catalogue import ChartGroup

SECTION = "Custom"
NO_PREFIX = "other"


def prefix(name: str) -> str:
    return name.split("/", 1)[0] if "/" in name else NO_PREFIX


def custom_plan(
    logged: Iterable[str], drawn: Iterable[str]
) -> tuple[tuple[ChartGroup, tuple[str, ...]], ...]:
    """A chart group per prefix of the ``logged`` names not ``drawn`` by the catalogue's
    charts, each with its names, sorted."""
    shown = set(drawn)
    groups: dict[str, list[str]] = defaultdict(list)
    for name in sorted(set(logged) - shown):
        groups[prefix(name)].append(name)
    return tuple(
        (ChartGroup(id=f"custom:{key}", title=key, section=SECTION), tuple(names))
        for key, names in sorted(groups.items())
    )
