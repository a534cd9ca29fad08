"""The live Run page's built charts, shared by every tab of this server process.

Tabs watching the same run with the same chart options draw the same charts: the
first feed to see a new step builds them (a pivot, a downsample and a JSON conversion
per chart: most of a poll's server time) and the others reuse them. A key names what
the charts show (``live_feed.ChartRequest``: run, chart groups, options, evaluations;
and the last step drawn), so a hit is exactly what the feed would have built.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

#: Kept entries: a few tabs on a few runs and option choices, each entry ~17 charts of
#: a few tens of kB; older entries are dropped first.
MAX_ENTRIES = 16

_lock = threading.Lock()
_entries: OrderedDict[Hashable, Any] = OrderedDict()


def get(key: Hashable) -> Any | None:
    """What ``put`` stored under ``key``, or None."""
    with _lock:
        value = _entries.get(key)
        if value is not None:
            _entries.move_to_end(key)
        return value


def put(key: Hashable, value: Any) -> None:
    """Keep ``value`` under ``key`` (dropping the least recently used beyond
    ``MAX_ENTRIES``)."""
    with _lock:
        _entries[key] = value
        _entries.move_to_end(key)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)


def clear() -> None:
    with _lock:
        _entries.clear()
