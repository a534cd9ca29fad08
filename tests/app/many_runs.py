"""A store of many ended runs, written fast: each run's folder files as a writer leaves
them, then the catalogue rebuilt from the folders (``spherescope store rebuild-index``).
Through the store's writers 300 runs took ~35 s on a busy 2-core machine."""

from __future__ import annotations

import json
import time
from pathlib import Path

from db.catalogue.manage import rebuild_index
from db.store import RunStore

OLD_NAME = "needle-baseline-2019"
#: The runs of the session's ``many_runs`` store (tests/app/conftest.py): a lab's scale.
MANY_RUNS = 300


def fill_many(home: Path, count: int) -> list[str]:
    """``count`` finished training runs, one second apart, oldest first; the oldest is
    named ``OLD_NAME`` and tagged ``archaeology``. Returns their ids, oldest first."""
    store = RunStore(home)
    start = time.time() - 10 * count
    run_ids = []
    for index in range(count):
        created = start + index
        run_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime(created)) + f"-{index:08x}"
        folder = store.runs_dir / run_id
        folder.mkdir(parents=True)
        name = OLD_NAME if index == 0 else f"sweep-run-{index:04d}"
        config = {"optimizer": {"lr": [0.1, 0.01][index % 2]}, "training": {"seed": index}}
        docs = {
            "meta.json": {"run_id": run_id, "name": name, "kind": "train", "config": config,
                          "created_at": created, "initial_status": "queued"},
            "status.json": {"status": "finished", "message": "", "started_at": created + 1,
                            "finished_at": created + 5, "host": "box", "device": "cpu"},
            "user.json": {"tags": ["archaeology"] if index == 0 else [], "notes": ""},
        }  # fmt: skip
        for file, doc in docs.items():
            (folder / file).write_text(json.dumps(doc), "utf-8")
        run_ids.append(run_id)
    rebuild_index(store)
    return run_ids
