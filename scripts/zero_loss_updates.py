"""Why the default Launch config's Recall@1 falls after its loss reaches 0: the weight
updates of the steps after the loss first reaches exactly 0, per optimiser.

    PYTHONPATH=. python scripts/zero_loss_updates.py [--steps 4000]

Trains the default config (triplet, Adam 1e-3, digits) and variants (SGD, Adam with
weight decay, AdamW) in this process, and prints per variant: the step the loss first
reaches 0, the share of zero-loss steps after it, the mean weight-update norm ‖Δw‖ on
zero-loss steps and on the few still-active steps after it, the update per active step
before it, and Recall@1 at its best and at the end.
"""

from __future__ import annotations

import argparse
import copy
import sys

import numpy as np
import torch
import torch.optim.optimizer as optimizer_hooks

#: name → config sections changed from the default Launch config
VARIANTS = {
    "adam 1e-3 (default)": {},
    "adam 1e-3, weights held on zero-loss steps": {"hold_on_zero": True},
    "adamw 1e-3, wd 1e-2": {"optimizer": {"name": "adamw", "weight_decay": 1e-2}},
    "sgd 0.05": {"optimizer": {"name": "sgd", "lr": 0.05}},
    "adam 1e-4": {"optimizer": {"lr": 1e-4}},
}


class UpdateNorms:
    """‖Δw‖ and ‖g‖ of every optimiser step (global hooks around ``Optimizer.step``);
    ``hold_on_zero``: a step whose gradient is exactly 0 (a zero loss) leaves the weights
    where they were (the optimiser's state still advances)."""

    def __init__(self, hold_on_zero: bool = False) -> None:
        self.hold_on_zero = hold_on_zero
        self.norms: list[float] = []
        self.grads: list[float] = []
        self._before: list[torch.Tensor] = []
        self._handles = [
            optimizer_hooks.register_optimizer_step_pre_hook(self._pre),
            optimizer_hooks.register_optimizer_step_post_hook(self._post),
        ]

    def _params(self, optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
        return [p for group in optimizer.param_groups for p in group["params"]]

    def _pre(self, optimizer, args, kwargs) -> None:
        params = self._params(optimizer)
        self._before = [p.detach().clone() for p in params]
        self.grads.append(
            sum(float((p.grad**2).sum()) for p in params if p.grad is not None) ** 0.5
        )

    def _post(self, optimizer, args, kwargs) -> None:
        if self.hold_on_zero and self.grads[-1] == 0.0:
            with torch.no_grad():
                for p, b in zip(self._params(optimizer), self._before, strict=True):
                    p.copy_(b)
        squares = sum(
            float(((p.detach() - b) ** 2).sum())
            for p, b in zip(self._params(optimizer), self._before, strict=True)
        )
        self.norms.append(squares**0.5)

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()


def measure(changes: dict, steps: int, seed: int) -> dict[str, float]:
    from sphere_engine.config import RunConfig
    from sphere_engine.tracking import InMemoryTracker
    from sphere_engine.train import run_training

    config = RunConfig().to_dict()
    changes = copy.deepcopy(changes)
    hold_on_zero = bool(changes.pop("hold_on_zero", False))
    for section, values in changes.items():
        config[section].update(values)
    config["training"].update(steps=steps, seed=seed, device="cpu")
    config["diagnostics"].update(eval_every=steps // 20, snapshot_size=0, tracked_samples=0)
    config["evaluation"].update(background=False, verification=False)
    tracker, updates = InMemoryTracker(), UpdateNorms(hold_on_zero)
    try:
        run_training(RunConfig.from_dict(config), tracker)
    finally:
        updates.close()
    loss = np.array([v for _, v in tracker.series("loss/total")])
    delta = np.array(updates.norms[: len(loss)])
    grads = np.array(updates.grads[: len(loss)])
    zero = loss == 0.0
    # the loss "reaches 0" at the first zero-loss step from which at least 90 % of the
    # next 200 steps have a zero loss too
    window = np.convolve(zero.astype(float), np.ones(200), "full")[199:] / 200
    settled = zero & (window >= 0.9)
    first_zero = int(settled.argmax()) if settled.any() else len(loss)
    after = slice(first_zero, None)
    active_before = ~zero[:first_zero]
    active_after = ~zero[after]
    recall = tracker.eval_series("recall@1")
    best_step, best = max(recall, key=lambda sv: sv[1])
    at_zero = min(recall, key=lambda sv: abs(sv[0] - first_zero - 1))
    return {
        "loss at 0 from step": first_zero + 1 if settled.any() else float("nan"),
        "zero-loss share after": float(zero[after].mean()) if settled.any() else float("nan"),
        "|dw| active before": float(delta[:first_zero][active_before].mean()),
        "|g| active before": float(grads[:first_zero][active_before].mean()),
        "|dw| zero-loss after": float(delta[after][zero[after]].mean())
        if zero[after].any()
        else float("nan"),
        "|dw| active after": float(delta[after][active_after].mean())
        if active_after.any()
        else float("nan"),
        "|g| active after": float(grads[after][active_after].mean())
        if active_after.any()
        else float("nan"),
        "sum |dw| after": float(delta[after].sum()),
        "R@1 near it": at_zero[1],
        "R@1 best": best,
        "R@1 best step": best_step,
        "R@1 final": recall[-1][1],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="only the variants containing this")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for name, changes in VARIANTS.items():
        if args.only not in name:
            continue
        figures = measure(changes, args.steps, args.seed)
        cells = ", ".join(f"{key} {value:.4g}" for key, value in figures.items())
        print(f"{name}: {cells}", flush=True)
    print(f"(digits, default Launch config, {args.steps} steps, seed {args.seed})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
