"""What evaluating a run's findings adds to the end of a run.

``--repeat`` runs of ``--steps`` logged steps with the engine's per-step scalars (and
``--evals`` evaluations) are written through the real tracker; on each, in the order
``RunLifecycle`` ends a run, the findings are evaluated and stored
(``db.findings.record_findings``: what this adds) and the run's files are compacted
into one (``store.compact(full=True)``: what the end of a run already did). Prints the
median seconds of each and their ratio.

    .venv/bin/python bench/findings_cost.py [--steps 100000 --evals 50 --repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from db.findings import record_findings  # noqa: E402
from db.store import RunStore  # noqa: E402
from sphere_engine.catalogue import METRICS, Source  # noqa: E402

PER_STEP = [m.key for m in METRICS if Source.TRAINING_BATCH in m.sources and not m.is_family]


def write_run(store: RunStore, steps: int, evals: int, seed: int) -> str:
    """A run as the engine logs it, flushed every 5,000 steps (not compacted)."""
    run_id = store.create_run({"model": {"embedding_dim": 128}}, f"bench {seed}", kind="train")
    rng = np.random.default_rng(seed)
    with store.tracker(run_id, flush_interval=1e9) as tracker:
        values = rng.uniform(0.1, 2.0, size=(steps, len(PER_STEP)))
        for step in range(1, steps + 1):
            tracker.track_many(dict(zip(PER_STEP, values[step - 1], strict=True)), step)
            if step % 5000 == 0:
                tracker.flush()
        every = max(steps // evals, 1)
        for step in range(every, steps + 1, every):
            tracker.track_eval({"recall@1": rng.uniform(), "uniformity": -3.0}, step)
    return run_id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--evals", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    store = RunStore(Path(tempfile.mkdtemp(prefix="findings-cost-")) / "home")
    findings_s, compact_s = [], []
    for seed in range(args.repeat):
        run_id = write_run(store, args.steps, args.evals, seed)
        # the order of RunLifecycle's end: findings on the run's files, then compaction
        t0 = time.perf_counter()
        record_findings(store, run_id)
        findings_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        store.compact(run_id, full=True)
        compact_s.append(time.perf_counter() - t0)
    f, c = statistics.median(findings_s), statistics.median(compact_s)
    print(
        f"{args.steps:,} steps × {len(PER_STEP)} scalars + {args.evals} evaluations, "
        f"{args.repeat} runs"
    )
    print(f"findings (read + evaluate + store): median {f:.3f} s")
    print(f"full compaction at the run's end:   median {c:.3f} s")
    print(f"ratio findings / compaction: {f / c:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
