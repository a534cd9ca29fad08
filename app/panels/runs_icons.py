"""Small icons for the Runs table's cells, drawn as SVG images (a data grid cell cannot
show a font icon): Material Design's error / warning / info glyphs with a count per
severity, and the marker of a run whose result cannot be trusted. No emoji: they are
empty boxes on a machine without an emoji font."""

from __future__ import annotations

import base64
from collections import Counter
from html import escape

from sphere_engine.findings import Detection, Severity

#: Material Design icon paths (24 × 24 viewBox, Apache 2.0).
PATHS = {
    Severity.CRITICAL: "M12 2C6.48 2 2 6.48 2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 12 2zm1 "
    "15h-2v-2h2v2zm0-4h-2V7h2v6z",  # error
    Severity.WARNING: "M1 21h22L12 2 1 21zm12-3h-2v-2h2v2zm0-4h-2v-4h2v4z",  # warning
    Severity.INFO: "M12 2C6.48 2 2 6.48 2 12s4.48 10 10 10 10-4.48 10-10S17.52 2 12 2zm1 "
    "15h-2v-6h2v6zm0-8h-2V7h2v2z",  # info
}
#: gpp_bad: a shield with a cross, beside the status of an untrusted run.
UNTRUSTED_PATH = (
    "M12 2 4 5v6.09c0 5.05 3.41 9.76 8 10.91 4.59-1.15 8-5.86 8-10.91V5l-8-3zm3.5 12.09-1.41 "
    "1.41L12 13.42 9.91 15.5 8.5 14.09 10.59 12 8.5 9.91 9.91 8.5 12 10.59l2.09-2.09 1.41 "
    "1.41L13.42 12l2.08 2.09z"
)
COLOURS = {Severity.CRITICAL: "#d32f2f", Severity.WARNING: "#ed6c02", Severity.INFO: "#0288d1"}
#: Most severe first, as the findings panel lists them.
ORDER = (Severity.CRITICAL, Severity.WARNING, Severity.INFO)
ICON, DIGIT, GAP, HEIGHT = 14, 7, 5, 16


def _data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def severity_counts(found: list[Detection] | None) -> dict[Severity, int]:
    """How many findings of each severity, most severe first (absent ones left out)."""
    counts = Counter(d.severity for d in found or [])
    return {s: counts[s] for s in ORDER if counts[s]}


def findings_icon(found: list[Detection] | None) -> str | None:
    """An image of one icon and a count per severity (None: no finding)."""
    counts = severity_counts(found)
    if not counts:
        return None
    parts, x = [], 0
    for severity, count in counts.items():
        scale = ICON / 24
        colour = COLOURS[severity]
        parts.append(
            f'<path transform="translate({x} 1) scale({scale})" fill="{colour}" '
            f'd="{PATHS[severity]}"/>'
            f'<text x="{x + ICON + 1}" y="13" font-size="12" font-family="sans-serif" '
            f'fill="{colour}">{count}</text>'
        )
        x += ICON + 1 + DIGIT * len(str(count)) + GAP
    width = x - GAP
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
        f'viewBox="0 0 {width} {HEIGHT}">{"".join(parts)}</svg>'
    )
    return _data_uri(svg)


def untrusted_icon() -> str:
    """The marker beside the status of a run whose result cannot be trusted."""
    colour = COLOURS[Severity.CRITICAL]
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{HEIGHT}" height="{HEIGHT}" '
        f'viewBox="0 0 24 24"><path fill="{colour}" d="{UNTRUSTED_PATH}"/></svg>'
    )
    return _data_uri(svg)


def img(uri: object, title: str) -> str:
    """An HTML ``<img>`` of an icon (the plain first table), "" for none (None, NaN)."""
    if not isinstance(uri, str) or not uri:
        return ""
    return f'<img src="{uri}" alt="{escape(title)}" title="{escape(title)}" height="{HEIGHT}">'
