"""A training-like writer process for the concurrency tests (run as a script).

    python writer_process.py HOME RUN_ID STEPS METRICS FLUSH_INTERVAL [PROGRESS_FILE]

Logs ``METRICS`` scalars per step with value ``step * 1000 + metric index``. With
``PROGRESS_FILE``, flushes every 500 steps and appends the last flushed step to it
after each completed flush, and loops forever (until killed). Otherwise writes
``STEPS`` steps, flushes, marks the run finished and compacts it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from db import RunStore


def main(argv: list[str]) -> None:
    home, run_id, steps, metrics, interval = argv[:5]
    progress = Path(argv[5]) if len(argv) > 5 else None
    store = RunStore(home)
    names = [f"metric/{i:02d}" for i in range(int(metrics))]
    store.set_status(run_id, "running")
    tracker = store.tracker(run_id, flush_interval=float(interval))
    step = 0
    while progress is not None or step < int(steps):
        tracker.track_many({name: step * 1000.0 + i for i, name in enumerate(names)}, step)
        tracker.track_progress(step + 1, int(steps))
        if progress is not None and step % 500 == 499:
            tracker.flush()
            with progress.open("a") as handle:
                handle.write(f"{step}\n")
        step += 1
    tracker.flush()
    store.set_status(run_id, "finished")
    store.compact(run_id)


if __name__ == "__main__":
    main(sys.argv[1:])
