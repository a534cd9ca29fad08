"""A process that changes runs of a store, for the catalogue's concurrency tests.

python catalogue_writer.py HOME SEED COUNT     create COUNT runs and move each
                                               through statuses, tags, notes,
                                               archive and some deletes
python catalogue_writer.py HOME compact SECONDS  fold the deltas again and again
python catalogue_writer.py HOME die RUN_ID     start RUN_ID, killed (SIGKILL) between
                                               its status write and its catalogue row
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from db.catalogue import journal, snapshot
from db.store import RunStore


def churn(store: RunStore, seed: int, count: int) -> None:
    rng = random.Random(seed)
    for index in range(count):
        run_id = store.create_run({"seed": seed, "index": index}, f"w{seed}-{index}",
                                  tags=[f"writer:{seed}"], project=f"p{index % 2}")  # fmt: skip
        store.start_run(run_id, host="h", pid=os.getpid())
        if rng.random() < 0.5:
            store.set_tags(run_id, [f"writer:{seed}", "kept"])
        store.set_status(run_id, rng.choice(["finished", "failed", "cancelled"]), "done")
        if rng.random() < 0.3:
            store.set_notes(run_id, f"note {index}")
        if rng.random() < 0.3:
            store.set_archived(run_id, True)
        if rng.random() < 0.15:
            store.delete_run(run_id)
        elif rng.random() < 0.2:
            store.set_status(run_id, "queued", "rerun")


def compact_loop(store: RunStore, seconds: float) -> None:
    end = time.time() + seconds
    while time.time() < end:
        snapshot.compact(store.files)
        time.sleep(0.01)


def die_mid_update(store: RunStore, run_id: str) -> None:
    def killed(*_args: object, **_kwargs: object) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    journal.write_delta = killed  # the status file is written, its row never is
    store.start_run(run_id, host="h", pid=os.getpid())


if __name__ == "__main__":
    home, what, argument = sys.argv[1:4]
    target = RunStore(home)
    if what == "compact":
        compact_loop(target, float(argument))
    elif what == "die":
        die_mid_update(target, argument)
    else:
        churn(target, int(what), int(argument))
