"""Cost of SphereScope in a 2-rank data-parallel job (gloo, CPU processes).

Each rank trains a ResNet-18 (128-d embedding, cosine-softmax loss) under
DistributedDataParallel on random 32×32 images. Three kinds of blocks of whole runs
alternate, on the same models: ``bare`` (the steps alone), ``global``
(``spherescope.init`` → the steps with ``log_embeddings`` at ``log_every=1`` and a
``log`` → ``finish``: the global batch and its gradients gathered every step) and
``rank0`` (the same with ``scope="rank0"``: no gathering). Every block starts and ends
with a barrier; rank 0 times it. The ratios are of the medians over blocks of the
per-step time, against ``bare``.

Target: global ≤ 1.10× at log_every=1.

    .venv/bin/python bench/ddp_overhead.py [--rounds 4] [--steps 20] [--batch 32]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

MODES = ("bare", "global", "rank0")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rank(rank: int, world: int, port: int, args: argparse.Namespace, home: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    import spherescope
    from sphere_engine.models import create_model

    torch.manual_seed(rank)
    model = torch.nn.parallel.DistributedDataParallel(create_model("resnet18", (3, 32, 32), 128))
    weights = torch.nn.Parameter(torch.randn(10, 128))
    optimizer = torch.optim.SGD([*model.parameters(), weights], lr=0.01)
    inputs = torch.randn(args.batch, 3, 32, 32)
    labels = torch.arange(args.batch) % 10

    def block(mode: str, steps: int) -> float:
        dist.barrier()
        started = time.perf_counter()
        run = None if mode == "bare" else spherescope.init(name=mode, home=home, scope=mode)
        for step in range(1, steps + 1):
            embeddings = model(inputs)
            if run is not None:
                run.log_embeddings(embeddings, labels, step=step)
            logits = 16.0 * F.normalize(embeddings, dim=1) @ F.normalize(weights, dim=1).T
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if run is not None:
                run.log({"loss/total": loss.item()}, step=step)
        if run is not None:
            run.finish()
        dist.barrier()
        return (time.perf_counter() - started) / steps

    for mode in MODES:  # warm-up: first-call costs of every path
        block(mode, 2)
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for round_ in range(args.rounds):
        order = MODES if round_ % 2 == 0 else MODES[::-1]  # alternate, so drifts hit all
        for mode in order:
            times[mode].append(block(mode, args.steps))
    if rank == 0:
        bare = statistics.median(times["bare"])
        print(f"bare   {1e3 * bare:8.1f} ms/step (median of {args.rounds} blocks)")
        for mode in ("global", "rank0"):
            ratio = statistics.median(times[mode]) / bare
            target = " (target ≤ 1.10)" if mode == "global" else ""
            print(f"{mode:<6} {1e3 * statistics.median(times[mode]):8.1f} ms/step  "
                  f"ratio {ratio:.3f}{target}")  # fmt: skip
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=20, help="steps per block")
    parser.add_argument("--batch", type=int, default=32, help="per rank")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"2 ranks, gloo, ResNet-18 on 32×32, batch {args.batch} per rank, log_every=1")
    with tempfile.TemporaryDirectory() as home:
        mp.spawn(_rank, args=(2, _free_port(), args, home), nprocs=2, join=True)


if __name__ == "__main__":
    main()
