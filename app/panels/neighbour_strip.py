"""The explorer's strip: a query and its nearest neighbours side by side, each as its
thumbnail (``db.thumbnails``) or, without one, its sample id; neighbours framed green
(same class) or red (another), with their similarity and norm under them."""

from __future__ import annotations

import base64
import html
import math

import pandas as pd

STYLE = """<style>
.neighbour-strip {display: flex; gap: 6px; overflow-x: auto; padding: 2px 0 8px;}
.neighbour-strip figure {margin: 0; text-align: center; font-size: 0.72rem; flex: none;}
.neighbour-strip .tile {width: 64px; height: 64px; border: 3px solid #999; display: flex;
  align-items: center; justify-content: center; background: #f4f4f4; box-sizing: content-box;}
.neighbour-strip img {width: 64px; height: 64px; object-fit: contain;
  image-rendering: pixelated;}
.neighbour-strip .query .tile {border-color: #1f77b4;}
.neighbour-strip .correct .tile {border-color: #2ca02c;}
.neighbour-strip .wrong .tile {border-color: #d62728;}
.neighbour-strip figcaption {line-height: 1.2; margin-top: 2px;}
</style>"""


def _tile(sample: int, png: bytes | None) -> str:
    if png is None:  # no image logged for this sample: its id stands in
        return f'<div class="tile"><code>{sample}</code></div>'
    data = base64.b64encode(png).decode("ascii")
    return f'<div class="tile"><img alt="sample {sample}" src="data:image/png;base64,{data}"></div>'


def _number(value: float, spec: str) -> str:
    return "–" if value is None or math.isnan(value) else format(value, spec)


def strip_html(
    query: int,
    query_class: str,
    query_norm: float,
    neighbours: pd.DataFrame,
    images: dict[int, bytes],
) -> str:
    """The strip of one query (``neighbours``: ``explorer.neighbour_strip``'s rows)."""
    figures = [
        f'<figure class="query" title="query {query}, class {html.escape(query_class)}">'
        f"{_tile(query, images.get(query))}<figcaption>query · "
        f"{html.escape(query_class)}<br>&nbsp;<br>‖f‖ {_number(query_norm, '.3g')}"
        "</figcaption></figure>"
    ]
    for item in neighbours.to_dict("records"):
        mark, kind = ("✓", "correct") if item["correct"] else ("✗", "wrong")
        sample, rank, name = int(item["neighbour"]), int(item["rank"]), html.escape(item["class"])
        figures.append(
            f'<figure class="{kind}" title="#{rank}: sample {sample}, class {name}">'
            f"{_tile(sample, images.get(sample))}<figcaption>{mark} #{rank} · {name}<br>"
            f"sim {_number(item['similarity'], '.3f')}<br>‖f‖ {_number(item['norm'], '.3g')}"
            "</figcaption></figure>"
        )
    return f'<div class="neighbour-strip">{"".join(figures)}</div>'
