"""A small reproduction of the SEC ablation (SCIENCE.md §2) on scikit-learn's digits.

Semihard triplet loss on an MLP, class-disjoint split (train on digits 0-4, test on
5-9), trained with SGD under several norm regularisers and seeds; prints a table in the
style of the SEC paper: NMI, F1, R@1, MAP@R and the mean norm variance of the training
batches (last quarter of training) and of the test embeddings.

    .venv/bin/python bench/sec_ablation.py [--steps 600] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import statistics

from sphere_engine.config import RunConfig
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training
from sphere_engine.validation import validate

VARIANTS = {
    "no regulariser": {"name": "none", "weight": 0.0},
    "SEC η=0.5 (μ = batch mean)": {"name": "sec", "weight": 0.5},
    "SEC η=1.0": {"name": "sec", "weight": 1.0},
    "L2 towards 0, η=0.01": {"name": "l2", "weight": 0.01},
    "L2 towards 0, η=0.1": {"name": "l2", "weight": 0.1},
}


def run(regularizer: dict, seed: int, steps: int, optimizer: str) -> dict[str, float]:
    config = RunConfig.from_dict(
        {
            "data": {"name": "digits", "batch_size": 40, "samples_per_class": 8},
            "model": {"name": "mlp", "embedding_dim": 32},
            "objective": {"kind": "loss", "name": "semihard_triplet"},
            "regularizer": regularizer,
            "optimizer": {"name": optimizer, "lr": 0.05 if optimizer == "sgd" else 1e-3},
            "training": {"steps": steps, "seed": seed},
            "diagnostics": {"eval_every": steps, "tracked_samples": 0},
        }
    )
    validate(config)
    tracker = InMemoryTracker()
    result = run_training(config, tracker)
    train_var = [v for s, v in tracker.series("norm/var") if s > 0.75 * steps]
    metrics = dict(result.final_metrics)
    metrics["train_norm_var"] = statistics.mean(train_var)
    return metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    args = parser.parse_args()
    columns = ("nmi", "f1", "recall@1", "map@r", "train_norm_var", "norm/var")
    print(f"{'variant':<30}" + "".join(f"{c:>16}" for c in columns))
    for label, regularizer in VARIANTS.items():
        runs = [run(regularizer, seed, args.steps, args.optimizer) for seed in args.seeds]
        cells = []
        for column in columns:
            values = [r[column] for r in runs]
            scale = 100.0 if column in ("nmi", "f1", "recall@1", "map@r") else 1.0
            spread = statistics.stdev(values) * scale if len(values) > 1 else 0.0
            cells.append(f"{statistics.mean(values) * scale:>9.3g} ±{spread:<5.2g}")
        print(f"{label:<30}" + "".join(f"{c:>16}" for c in cells))


if __name__ == "__main__":
    main()
