"""Run by torchrun from test_distributed.py: one SDK run per job, from every rank.

``python ddp_job.py OUT MODE[+MODE...]``; MODE ``log`` logs the problem of
``ddp_problem``, ``rank0`` the same with ``scope="rank0"``, ``die`` kills rank 1
mid-run, ``raise`` makes rank 1 raise, ``elastic`` makes rank 1 raise in the first
attempt only (the test starts the job again with the same rendezvous id). Several
modes joined by ``+`` run one after the other in the same job (one torchrun start for
all), each into the store ``$SPHERESCOPE_HOME/<mode>``. Each rank writes
``OUT/rank<r>.json``, or ``OUT/<mode>/rank<r>.json`` for several modes.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

import spherescope
from tests.spherescope.ddp_problem import STEPS, evaluation_shard, loss_of, rank_batch

out, modes = Path(sys.argv[1]), sys.argv[2].split("+")
rank = int(os.environ["RANK"])


def job(mode: str, out: Path, home: str | None) -> None:
    result: dict = {"rank": rank}
    scope = "rank0" if mode == "rank0" else "global"
    with spherescope.init(name=f"ddp-{mode}", scope=scope, home=home) as run:
        result["run_id"] = run.id
        result["world_size"] = run.world_size
        result["resumed_step"] = run.resumed_step
        if mode == "elastic" and os.environ["ATTEMPT"] == "0":
            mode = "raise"
        for step in range(1, STEPS + 1):
            embeddings, labels = rank_batch(rank, step)
            run.log_embeddings(embeddings, labels, step=step)
            loss = loss_of(embeddings)
            loss.backward()
            run.log({"loss/total": loss.item()}, step=step, reduce="mean")
            run.log({"rank/value": float(rank)}, step=step)  # rank 0's is recorded
            if mode in ("die", "raise") and step == 2:
                if rank == 1 and mode == "die":
                    os.kill(os.getpid(), signal.SIGKILL)
                if rank == 1:
                    raise ValueError("rank 1 broke at step 2")
                time.sleep(30)  # rank 0 waits to be stopped
        x, y, ids = evaluation_shard(rank)
        result["by_size"] = run.evaluate(x, y, step=STEPS, dataset_size=21)
        result["by_id"] = run.evaluate(x, y, step=STEPS + 1, sample_ids=ids)
    out.mkdir(exist_ok=True)
    (out / f"rank{rank}.json").write_text(json.dumps(result))


if len(modes) == 1:
    job(modes[0], out, None)
else:
    for each in modes:
        job(each, out / each, str(Path(os.environ["SPHERESCOPE_HOME"]) / each))
