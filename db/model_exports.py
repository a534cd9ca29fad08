"""The model exports of a run: one JSON list in its folder (``model_exports.json``).

Each entry is what ``spherescope export-model`` did: the file, format, checkpoint, mode
and its check's numbers (``passed`` false for a file kept under a ``.failed`` name).
Torch-free: the Run page reads it.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from db.atomic import write_atomic
from db.file_catalogue import FileCatalogue
from db.json_plain import json_plain

FILE_NAME = "model_exports.json"
_LOCK = threading.Lock()


def model_exports(files: FileCatalogue, run_id: str) -> list[dict[str, Any]]:
    """The run's recorded exports, oldest first ([] when none)."""
    path = files.existing_run_dir(run_id) / FILE_NAME
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: unreadable model export list ({error})") from None
    return [entry for entry in entries if isinstance(entry, dict)]


def record_model_export(files: FileCatalogue, run_id: str, entry: dict[str, Any]) -> None:
    """Append ``entry`` (JSON-plain: NaN becomes null) to the run's list, atomically."""
    path = files.existing_run_dir(run_id) / FILE_NAME
    with _LOCK:
        entries = [*model_exports(files, run_id), json_plain(entry)]
        text = json.dumps(entries, indent=1, allow_nan=False)
        write_atomic(path, lambda temp: temp.write_text(text, encoding="utf-8"))
