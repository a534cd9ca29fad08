"""The run's watch over its periodic evaluation: early stopping and the best weights.

``ValidationWatch`` follows one evaluation metric (``training.early_stop_metric``) as the
results come in, in step order: the best value, the step it was measured at and how many
evaluations since then did not improve on it. With ``training.early_stop_patience`` = P
it asks the loop to stop after P evaluations in a row without improvement. With
``keep_best`` (folds and ``evaluation.final_test``) it keeps a host copy of the weights
each evaluation embedded with, until that evaluation's result says whether it is the
best: evaluations finish beside training (``BackgroundEvaluations``), so the weights of
a step are copied when it is captured, not when its metric is known; at most the
evaluations in flight plus the best are held. Checkpoints keep its state (best weights
included), so a resumed run (a requeued SLURM job) goes on counting where it was.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from sphere_engine.catalogue.lookup import find
from sphere_engine.catalogue.metric import Source
from sphere_engine.config.config_error import ConfigError

Weights = dict[str, torch.Tensor]


class ValidationWatch:
    def __init__(self, metric: str, patience: int, *, keep_best: bool = False) -> None:
        entry = find(metric, Source.EVALUATION)
        self.metric = metric
        self.higher_is_better = bool(entry is None or entry.higher_is_better is not False)
        self.patience = patience
        self.keep_best = keep_best
        self.best: float | None = None
        self.best_step: int | None = None
        self.best_weights: Weights | None = None
        self.since_best = 0  # evaluations since the best one
        self._captured: dict[int, Weights] = {}

    def captured(self, step: int, model: torch.nn.Module) -> None:
        """The evaluation of ``step`` embedded with ``model``'s current weights."""
        if self.keep_best:
            state = model.state_dict()
            self._captured[step] = {k: v.detach().to("cpu", copy=True) for k, v in state.items()}

    def observe(self, step: int, metrics: dict[str, float]) -> None:
        """The result of the evaluation of ``step`` (a NaN value never improves). A metric
        this run's evaluation does not compute at all (``classifier_accuracy`` of a pair
        loss, ``verification/eer`` with verification off) fails the run at its first
        evaluation when early stopping is on, rather than stopping it for no reason."""
        if self.patience and self.metric not in metrics:
            raise ConfigError(
                "training.early_stop_metric",
                f"{self.metric!r} is not computed by this run's evaluation; it computes "
                + ", ".join(sorted(k for k in metrics if "/" not in k)[:12]),
            )
        value = metrics.get(self.metric, math.nan)
        weights = self._captured.pop(step, None)
        for older in [s for s in self._captured if s < step]:
            del self._captured[older]
        if math.isfinite(value) and (self.best is None or self._better(value, self.best)):
            self.best, self.best_step, self.since_best = value, step, 0
            if weights is not None:
                self.best_weights = weights
        else:
            self.since_best += 1

    def _better(self, value: float, best: float) -> bool:
        return value > best if self.higher_is_better else value < best

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps (a resumed run goes on counting from it)."""
        return {
            "best": self.best,
            "best_step": self.best_step,
            "since_best": self.since_best,
            "best_weights": self.best_weights,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best, self.best_step = state["best"], state["best_step"]
        self.since_best = int(state["since_best"])
        self.best_weights = state["best_weights"] if self.keep_best else None

    @property
    def should_stop(self) -> bool:
        return bool(self.patience) and self.since_best >= self.patience

    def stop_message(self, step: int) -> str:
        """The finished run's status message after an early stop at ``step``."""
        best = (
            "no finite value"
            if self.best is None
            else f"best {self.best:.4g} at step {self.best_step}"
        )
        return (
            f"stopped early at step {step}: no improvement of {self.metric} in "
            f"{self.since_best} evaluations ({best})"
        )
