"""``spherescope analyze IMAGES.npz --pairs / --templates ...``: face protocols.

IMAGES.npz holds embeddings keyed by image id (``sphere_engine.metrics.face``). The
metrics are printed, written as JSON and recorded as an analysis run like any other
``analyze`` (``analysis_epilogue``), with the mode they were computed in (convention,
flip-sum, kept norms, detector scores); what the protocol used (template counts) and
the targets it cannot resolve (too few impostor pairs or non-mated probes) are listed
on stderr instead of reported as numbers. When no target of a protocol is measurable,
nothing is recorded and the exit code is 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from worker.analysis_epilogue import publish_analysis

FACE_OPTIONS = ("pairs", "templates", "matches", "probes", "enrolled", "distractors")
FEATURE_MODES = ("flip_sum", "keep_norms", "detector_scores", "convention")


def face_analyze_command(
    path: str | None, out: str | None, protocol: dict[str, Any], name: str | None = None
) -> int:
    """Run the face protocols named in ``protocol`` (``FACE_OPTIONS`` + ``FEATURE_MODES``)."""
    from sphere_engine.metrics.face import face_protocol_metrics

    try:
        if path is None:
            raise ValueError("face protocols need IMAGES.npz (embeddings keyed by image id)")
        result = face_protocol_metrics(path, **_with_default_convention(protocol))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in result.used:
        print(f"used: {line}", file=sys.stderr)
    mode = _mode(protocol)
    files = {
        key: str(Path(value).resolve())
        for key, value in protocol.items()
        if key in FACE_OPTIONS and value
    }
    config = {
        "analysis": {"source": str(Path(path).resolve()), "protocol": "face", "files": files} | mode
    }
    return publish_analysis(
        result.metrics,
        target=Path(out) if out else Path(path).with_suffix(".metrics.json"),
        config=config,
        name=name or Path(path).name,
        notes=result.notes,
        extra={"mode": mode},
    )


def _with_default_convention(protocol: dict[str, Any]) -> dict[str, Any]:
    from sphere_engine.metrics.face import DEFAULT_CONVENTION

    return protocol | {"convention": protocol.get("convention") or DEFAULT_CONVENTION}


def _mode(protocol: dict[str, Any]) -> dict[str, Any]:
    """How the features and thresholds were computed, as recorded with the analysis."""
    from sphere_engine.metrics.face import DEFAULT_CONVENTION

    scores = protocol.get("detector_scores")
    return {
        "convention": protocol.get("convention") or DEFAULT_CONVENTION,
        "flip_sum": bool(protocol.get("flip_sum")),
        "keep_norms": bool(protocol.get("keep_norms")),
        "detector_scores": str(Path(scores).resolve()) if scores else None,
    }
