"""GPU check of the SDK in a data-parallel job: NCCL on the GPU, gloo beside it.

Runs real ``torchrun`` jobs whose ranks call ``spherescope.init``, ``log_embeddings``
(embeddings on the GPU, with their gradients), ``log(reduce="mean")`` and gather an
evaluation shard (``gather_union``, what ``Run.evaluate`` gathers), then asserts that
the run's stored statistics equal those of the same global batch logged by one process
on the CPU, and that the gathered evaluation set is the data set's union:

- ``nccl`` world 1 (every GPU machine): the user's ``init_process_group("nccl")``; also
  one real NCCL all-gather on the device ``DistributedContext.device`` picks;
- ``nccl`` world 2 (only with two GPUs or more): the process group initialised by
  ``spherescope.init`` itself from torchrun's environment (one GPU per local rank);
- ``gloo`` world 2 with both ranks' embeddings on GPU 0: the gathers move them to the
  CPU for gloo and back.

Needs torch (a CUDA build), numpy, duckdb, pyarrow, pandas (with python-dateutil, six
and tzdata: a run's end records its findings with it) and this repository; not
scikit-learn, SciPy, FAISS or torchvision (the comparison reads the store with DuckDB).
About 30-60 s.

    python bench/gpu_nccl_check.py     # exit status 0: every case equal
    python bench/gpu_nccl_check.py --cpu-rehearsal   # the gloo case on the CPU (no GPU)
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.utils.data import DistributedSampler  # noqa: E402

from tests.spherescope.ddp_problem import (  # noqa: E402
    EVAL_SIZE,
    STEPS,
    evaluation_set,
    loss_of,
    rank_batch,
)

CASE_TIMEOUT_S = 60


# -- one rank of a job (run by torchrun) ---------------------------------------------------
def rank_main(out: Path, backend: str, init: str) -> None:
    import spherescope
    from sphere_engine.distributed import DistributedContext, gather_union

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ["LOCAL_RANK"])
    if backend == "nccl":
        device = torch.device("cuda", local)
        if init == "user":
            torch.cuda.set_device(device)
            dist.init_process_group("nccl")
    else:  # gloo ranks share GPU 0 for their tensors (the CPU in a rehearsal)
        device = torch.device(os.environ.get("CHECK_GLOO_DEVICE", "cuda:0"))
        dist.init_process_group("gloo")
    result: dict = {"rank": rank}
    if world == 1:  # the SDK does not talk in a world of one: try NCCL on its device here
        group = DistributedContext(0, 1, 0, "check", dist.group.WORLD)
        placed = group.device(torch.device("cpu"))
        parts = [torch.empty(3, device=placed)]
        dist.all_gather(parts, torch.arange(3.0, device=placed))
        result["device_check"] = [placed.type, parts[0].tolist()]
    with spherescope.init(name=f"gpu-{backend}-{world}") as run:
        result["run_id"], result["backend"] = run.id, str(dist.get_backend())
        for step in range(1, STEPS + 1):
            embeddings, labels = _batch(rank, step)
            embeddings = embeddings.detach().to(device).requires_grad_(True)
            run.log_embeddings(embeddings, labels.to(device), step=step)
            loss = _loss(embeddings)
            loss.backward()
            run.log({"loss/total": loss.item()}, step=step, reduce="mean")
        x, y, ids = _shard(rank, world)
        union = gather_union(x.to(device), y.to(device), run.context, sample_ids=ids.to(device))
        result["union_device"] = union.embeddings.device.type
        result["union"] = [union.sample_ids.cpu().tolist(), union.embeddings.cpu().tolist()]
    (out / f"rank{rank}.json").write_text(json.dumps(result))


def _batch(rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``ddp_problem.rank_batch`` with each row's norm spread off its rank's exact value.

    The tests' norms of exactly 1 + 2r sit on a norm-histogram bin edge, and within one
    rank every norm is equal, so the correlation of gradient with 1/||f|| and the
    small / large-norm split are decided by float rounding, which differs between the
    GPU and the CPU reference: spread norms make every statistic well conditioned."""
    embeddings, labels = rank_batch(rank, step)
    spread = 1.013 + 0.37 * torch.arange(embeddings.shape[0], dtype=torch.float32) / len(labels)
    return (embeddings.detach() * spread[:, None]).requires_grad_(True), labels


def _loss(embeddings: torch.Tensor) -> torch.Tensor:
    """``ddp_problem.loss_of`` on the embeddings' device."""
    width = embeddings.shape[1]
    target = torch.nn.functional.normalize(torch.ones(width, device=embeddings.device), dim=0)
    return (-(embeddings @ target) + 0.1 * embeddings.pow(2).sum(dim=1)).mean()


def _shard(rank: int, world: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x, y, ids = evaluation_set()
    sampler = DistributedSampler(range(EVAL_SIZE), num_replicas=world, rank=rank, shuffle=False)
    index = torch.tensor(list(sampler))
    return x[index], y[index], ids[index]


# -- the driver ------------------------------------------------------------------------------
def main(rehearsal: bool) -> int:
    """``rehearsal``: only the gloo case, on the CPU (checks this script without a GPU)."""
    if rehearsal:
        os.environ["CHECK_GLOO_DEVICE"] = "cpu"
        cases = [("gloo", 2, "user")]
    elif not torch.cuda.is_available():
        print("gpu_nccl_check: no CUDA device visible", file=sys.stderr)
        return 2
    else:
        gpus = torch.cuda.device_count()
        cases = [("nccl", 1, "user")]
        if gpus >= 2:
            cases.append(("nccl", 2, "sdk"))
        cases.append(("gloo", 2, "user"))
        print(f"torch {torch.__version__}, {gpus} GPU(s): {torch.cuda.get_device_name(0)}")
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        references = {world: _reference(work / f"single-{world}", world) for world in {1, 2}}
        for backend, world, init in cases:
            started = time.perf_counter()
            problems = _case(work / f"{backend}-{world}", backend, world, init, references[world])
            took = time.perf_counter() - started
            label = f"{backend} world {world} ({init} init)"
            if problems:
                failures += 1
                print(f"FAIL {label}, {took:.1f} s:\n  " + "\n  ".join(problems))
            else:
                print(f"ok   {label}, {took:.1f} s")
    return 1 if failures else 0


def _case(work: Path, backend: str, world: int, init: str, reference: dict[str, list]) -> list[str]:
    home, out = work / "store", work / "out"
    out.mkdir(parents=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SPHERESCOPE_HOME": str(home),
        "OMP_NUM_THREADS": "1",
    }
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc_per_node={world}",
        "--master_addr=127.0.0.1",
        f"--master_port={_free_port()}",
        str(Path(__file__).resolve()),
        "--rank",
        str(out),
        backend,
        init,
    ]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=CASE_TIMEOUT_S
    )
    if done.returncode != 0:
        return [f"torchrun exited {done.returncode}:", done.stderr[-3000:]]
    results = [json.loads(p.read_text()) for p in sorted(out.glob("rank*.json"))]
    problems = []
    if len(results) != world or len({r["run_id"] for r in results}) != 1:
        problems.append(f"expected one run from {world} ranks, got {results!r:.300}")
    if any(r["backend"] != backend for r in results):
        problems.append(f"backends {[r['backend'] for r in results]}, expected {backend}")
    for result in results:
        if "device_check" in result and result["device_check"] != ["cuda", [0.0, 1.0, 2.0]]:
            problems.append(f"NCCL all-gather on the context's device: {result['device_check']}")
        if (
            result["union_device"]
            != torch.device(os.environ.get("CHECK_GLOO_DEVICE", "cuda:0")).type
        ):
            problems.append(f"rank {result['rank']}: the union came back on the CPU")
        problems += _union_problems(result)
    problems += _series_problems(home, results[0]["run_id"] if results else "", reference)
    return problems


def _union_problems(result: dict) -> list[str]:
    x, _, ids = evaluation_set()
    got_ids, got_x = result["union"]
    if got_ids != ids.tolist():
        return [f"rank {result['rank']}: gathered ids {got_ids}, expected 0..{EVAL_SIZE - 1}"]
    if not torch.allclose(torch.tensor(got_x), x, atol=1e-6):
        return [f"rank {result['rank']}: gathered embeddings differ from the data set's"]
    return []


def _reference(home: Path, world: int) -> dict[str, list]:
    """The same global batches (all ranks' rows, in rank order) logged by one CPU process."""
    import spherescope

    with spherescope.init(name=f"single-{world}", home=str(home)) as run:
        for step in range(1, STEPS + 1):
            parts = [_batch(rank, step) for rank in range(world)]
            embeddings = torch.cat([e.detach() for e, _ in parts]).requires_grad_(True)
            run.log_embeddings(embeddings, torch.cat([y for _, y in parts]), step=step)
            loss = loss_of(embeddings)
            loss.backward()
            run.log({"loss/total": loss.item()}, step=step)
    return _stored_series(home, run.id)


def _stored_series(home: Path, run_id: str) -> dict[str, list]:
    from db.reader import query_arrow
    from db.store import RunStore

    rows = query_arrow(
        RunStore(home),
        {"s": ("scalars", [run_id])},
        "SELECT name, step, value FROM s ORDER BY name, step",
    ).to_pylist()
    series: dict[str, list] = {}
    for row in rows:
        series.setdefault(row["name"], []).append((row["step"], row["value"]))
    return series


def _series_problems(home: Path, run_id: str, reference: dict[str, list]) -> list[str]:
    if not run_id:
        return []
    got = _stored_series(home, run_id)
    if set(got) != set(reference):
        return [f"metric names differ: {sorted(set(got) ^ set(reference))}"]
    if not any(name.startswith("grad/") for name in got):
        return ["no gradient statistics were recorded"]
    problems = []
    for name, expected in reference.items():
        steps_ok = [s for s, _ in got[name]] == [s for s, _ in expected]
        values_ok = all(_close(a, b) for (_, a), (_, b) in zip(got[name], expected, strict=False))
        if not (steps_ok and values_ok):
            problems.append(f"{name}: {got[name]} != single process {expected}")
    return problems


def _close(a: float, b: float) -> bool:
    # the GPU's float32 reductions against the CPU's
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--rank":
        rank_main(Path(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        sys.exit(main(rehearsal=sys.argv[1:] == ["--cpu-rehearsal"]))
