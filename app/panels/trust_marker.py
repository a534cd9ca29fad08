"""The one marker of a run whose result cannot be trusted (a critical finding fired:
diverged, never learned, collapsed), drawn beside its status on the Run page and in
Compare. Plain text, no emoji: it reads the same on a machine without an emoji font."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from db.findings import untrusted_reasons
from sphere_engine.findings import Detection

MARKER = "untrusted"
CSS_CLASS = "spherescope-untrusted"
_STYLE = "color:#d62728;font-size:0.85rem;font-weight:600;margin-left:0.4rem"


def status_text(status: str, untrusted: bool) -> str:
    """``status`` with the marker beside it when the run cannot be trusted."""
    return f"{status} · {MARKER}" if untrusted else status


def reasons(found: Sequence[Detection] | None) -> list[str]:
    """Why the run cannot be trusted (titles of its critical findings); empty when it
    can."""
    return untrusted_reasons(list(found or []))


def marker_html(why: Sequence[str]) -> str:
    """The marker as HTML (its reasons on hover), or "" for a trusted run."""
    if not why:
        return ""
    title = escape("Result cannot be trusted: " + "; ".join(why), quote=True)
    return f'<span class="{CSS_CLASS}" title="{title}" style="{_STYLE}">{MARKER}</span>'
