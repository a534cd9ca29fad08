"""``spherescope analyze IMAGES.npz --pairs / --templates ...``: face protocols.

IMAGES.npz holds embeddings keyed by image id (``sphere_engine.metrics.face``). The
metrics are printed, written as JSON and recorded as an analysis run like any other
``analyze``; targets the protocol cannot resolve (too few impostor pairs or non-mated
probes) are listed on stderr instead of reported as numbers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from db.store import RunStore

FACE_OPTIONS = ("pairs", "templates", "matches", "probes", "enrolled", "distractors")


def face_analyze_command(
    path: str | None, out: str | None, protocol: dict[str, Any], name: str | None = None
) -> int:
    """Run the face protocols named in ``protocol`` (``FACE_OPTIONS`` + ``flip_sum``)."""
    from sphere_engine.metrics.face import face_protocol_metrics
    from worker.local_run import _lifecycle, format_metrics

    try:
        if path is None:
            raise ValueError("face protocols need IMAGES.npz (embeddings keyed by image id)")
        metrics, notes = face_protocol_metrics(path, **protocol)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(format_metrics(metrics))
    target = Path(out) if out else Path(path).with_suffix(".metrics.json")
    target.write_text(json.dumps(metrics, indent=2, sort_keys=True))
    print(f"metrics written to {target}", file=sys.stderr)
    files = {
        key: str(Path(value).resolve())
        for key, value in protocol.items()
        if key in FACE_OPTIONS and value
    }
    config = {
        "analysis": {
            "source": str(Path(path).resolve()),
            "protocol": "face",
            "files": files,
            "flip_sum": bool(protocol.get("flip_sum")),
        }
    }
    store = RunStore()
    run_id = store.create_run(config, name or Path(path).name, kind="analysis", status="running")
    with _lifecycle(store, run_id) as run:
        run.tracker.track_eval(metrics, 0)
    print(f"analysis recorded as run {run_id} in {store.home}", file=sys.stderr)
    return 0
