"""Generate the labelled corpus the findings are calibrated on (README: "How findings are
calibrated"): real short runs on digits, several seeds, plus synthetic series for the
failure modes too slow to train on a CPU.

    PYTHONPATH=. python scripts/findings_corpus.py [--out tests/sphere_engine/findings/corpus]

Every run is trained in this one process, one after another, on one thread (a few
minutes of CPU in all). Each run is labelled by its outcome, never by the rules: values
that became non-finite, its final Recall@1 against the same model untrained (a one-step,
lr = 0 run of the same seed), and its loss and evaluation curves. Writes ``series.parquet``
(run, source, name, step, value: the series the rules read) and ``runs.json`` (per run:
group, seed, half, labels, the outcome figures, config).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

OUT = Path("tests/sphere_engine/findings/corpus")
#: The CPU-sized presets (digits); the others need MNIST, a GPU or a research dataset.
CPU_PRESETS = ("sec-ablation", "sec-losses", "sec-bn-wn", "sec-optimizers", "sec-simclr",
               "isotropic", "smoke")  # fmt: skip
PRESET_SEEDS = (0, 1, 2)
FAILURE_SEEDS = (0, 1, 2, 3)
#: Evaluations per run: a curve, not one point.
EVALUATIONS = 6
#: What the labels read besides the rules' own series.
EXTRA_TRAIN = ("loss/total", "loss/metric", "mining/active_fraction")
EXTRA_EVAL = ("recall@1",)
#: The default Launch config trained on: its loss reaches 0 near step 2,400 on digits.
LONG_STEPS = 4000
#: Learnt: final Recall@1 this far above the untrained model's (digits: a few hundred
#: test queries, so a point of R@1 is within noise).
LEARNT_MARGIN = 0.02


def launch_default() -> dict[str, Any]:
    from sphere_engine.config import RunConfig

    return RunConfig().to_dict()


def preset_runs() -> list[tuple[str, dict[str, Any]]]:
    from app.presets import PRESETS

    runs = []
    for key in CPU_PRESETS:
        for name, config in PRESETS[key].runs():
            parts = name.split(" | ")
            runs.append((f"preset:{key}/{parts[1] if len(parts) == 3 else name}", config))
    runs.append(("launch-default", launch_default()))
    # the default run trained on past the step where its loss reaches 0 (issue's case)
    long = launch_default()
    long["training"]["steps"] = LONG_STEPS
    runs.append(("launch-default-long", long))
    return runs


def failure_runs() -> list[tuple[str, dict[str, Any], str]]:
    """(group, config, intended mode): runs that truly fail, on the default config."""
    base = launch_default()

    def variant(**sections: dict[str, Any]) -> dict[str, Any]:
        config = copy.deepcopy(base)
        for section, values in sections.items():
            config.setdefault(section, {}).update(values)
        return config

    return [
        # the lr = 1e9 run: a finite loss while the norms explode
        ("fail:sgd-lr-1e9", variant(optimizer={"name": "sgd", "lr": 1e9}), "diverged"),
        ("fail:adam-lr-100", variant(optimizer={"name": "adam", "lr": 100.0}), "diverged"),
        # every pair inside its margins: no active pair from the first step
        (
            "fail:contrastive-no-active-pair",
            variant(
                objective={
                    "name": "contrastive",
                    "options": {"pos_margin": -1.0, "neg_margin": 1.0},
                }
            ),
            "never_learned",
        ),
        # positives pulled together, negatives never pushed apart: one point
        (
            "fail:contrastive-positives-only",
            variant(
                objective={
                    "name": "contrastive",
                    "options": {"pos_margin": 1.0, "neg_margin": 1.0},
                },
                optimizer={"name": "sgd", "lr": 0.5},
            ),
            "collapsed",
        ),
        # triplet at a high SGD lr: unstable, Recall@1 half the untrained model's
        ("fail:triplet-sgd-lr-0.5", variant(optimizer={"name": "sgd", "lr": 0.5}), "unstable"),
        # Adam at 1e-2: R@1 on the unseen classes peaks early and falls as the loss falls
        ("fail:adam-lr-1e-2", variant(optimizer={"name": "adam", "lr": 0.01}), "overfit"),
        # the μ = 0 regulariser, strong, on batch-normalised embeddings: norms shrink
        (
            "fail:l2-to-zero-500",
            variant(
                regularizer={"name": "l2", "weight": 500.0},
                optimizer={"name": "sgd", "lr": 0.001, "momentum": 0.0},
                model={"embedding_bn": True},
            ),
            "norms_to_eps",
        ),
        # a fixed simplex head that never moves (lr = 0): centroids stay off their vertices
        (
            "fail:simplex-head-frozen",
            variant(
                objective={"kind": "head", "name": "simplex"},
                optimizer={"name": "sgd", "lr": 0.0},
                data={"split": "standard"},
            ),
            "off_vertices",
        ),
    ]


def healthy_extra_runs() -> list[tuple[str, dict[str, Any]]]:
    """Healthy runs of what the presets leave out: a fixed simplex head that trains."""
    config = launch_default()
    config["objective"].update(kind="head", name="simplex")
    config["data"]["split"] = "standard"
    return [("healthy:simplex-head", config)]


def train(config: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """Train ``config`` here; (train rows, eval rows, stopped by a non-finite loss)."""
    from sphere_engine.config import RunConfig
    from sphere_engine.errors import TrainingDivergedError
    from sphere_engine.findings import read_keys
    from sphere_engine.tracking import InMemoryTracker
    from sphere_engine.train import run_training

    tracker = InMemoryTracker()
    stopped = False
    try:
        run_training(RunConfig.from_dict(config), tracker)
    except TrainingDivergedError:
        stopped = True
    keys = {key for _, key in read_keys()}
    train_keys = keys | set(EXTRA_TRAIN)
    eval_keys = keys | set(EXTRA_EVAL)
    train_rows = pd.DataFrame(
        [(s, k, v) for s, k, v, _ in tracker.scalars if k in train_keys],
        columns=["step", "name", "value"],
    )
    eval_rows = pd.DataFrame(
        [(s, k, v) for s, k, v in tracker.evals if k in eval_keys],
        columns=["step", "name", "value"],
    )
    return train_rows, eval_rows, stopped


def corpus_config(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """The run as launched, at ``seed``, with a curve of evaluations and nothing the
    rules do not read (no snapshot, no tracked samples, no verification)."""
    config = copy.deepcopy(config)
    steps = int(config.get("training", {}).get("steps", 300))
    config.setdefault("training", {}).update(seed=seed, device="cpu")
    diagnostics = config.setdefault("diagnostics", {})
    diagnostics.update(eval_every=max(steps // EVALUATIONS, 1), snapshot_size=0,
                       tracked_samples=0)  # fmt: skip
    diagnostics["log_every"] = max(int(diagnostics.get("log_every", 1)), steps // 200, 1)
    config.setdefault("evaluation", {}).update(background=False, verification=False)
    return config


def untrained(config: dict[str, Any]) -> dict[str, Any]:
    """The same model and seed evaluated before any update (lr = 0, one step)."""
    config = copy.deepcopy(config)
    config["training"]["steps"] = 1
    config.setdefault("optimizer", {}).update(lr=0.0)
    config.setdefault("regularizer", {}).update(weight=0.0)
    config["diagnostics"]["eval_every"] = 1
    return config


def outcome(train_rows: pd.DataFrame, eval_rows: pd.DataFrame, base_r1: float) -> dict[str, Any]:
    """The figures the labels are decided on (none of them a rule's output)."""

    def series(frame: pd.DataFrame, key: str) -> pd.Series:
        rows = frame[frame["name"] == key]
        return pd.Series(rows["value"].to_numpy(float), index=rows["step"].to_numpy())

    recall = series(eval_rows, "recall@1")
    loss = series(train_rows, "loss/total")
    norms = series(train_rows, "norm/mean")
    values = np.concatenate([train_rows["value"].to_numpy(float), recall.to_numpy(float)])
    finite_recall = recall[np.isfinite(recall)]
    final_r1 = float(finite_recall.iloc[-1]) if len(finite_recall) else math.nan
    best_r1 = float(finite_recall.max()) if len(finite_recall) else math.nan
    finite_norms = norms[np.isfinite(norms)]

    def loss_near(step: float) -> float:
        position = int(loss.index.searchsorted(step))
        return float(loss.iloc[max(position - 5, 0) : position + 5].median())

    best_step = float(finite_recall.idxmax()) if len(finite_recall) else math.nan
    return {
        "nonfinite": bool(not np.isfinite(values).all()),
        "untrained_recall@1": base_r1,
        "final_recall@1": final_r1,
        "best_recall@1": best_r1,
        "first_loss": float(loss.iloc[0]) if len(loss) else math.nan,
        "final_loss": float(loss.iloc[-max(len(loss) // 10, 1) :].median())
        if len(loss)
        else math.nan,
        "first_norm": float(finite_norms.iloc[0]) if len(finite_norms) else math.nan,
        "final_norm": float(finite_norms.iloc[-1]) if len(finite_norms) else math.nan,
        "peak_norm": float(finite_norms.max()) if len(finite_norms) else math.nan,
        "zero_loss_share": float((loss == 0).mean()) if len(loss) else 0.0,
        "loss_at_best_recall": loss_near(best_step) if len(loss) and len(recall) else math.nan,
        "loss_at_final_recall": loss_near(float(finite_recall.index[-1]))
        if len(loss) and len(finite_recall)
        else math.nan,
    }


def labels_of(figures: dict[str, Any], intended: str) -> dict[str, bool]:
    """Labels from outcomes (never from a rule): non-finite values, Recall@1 against the
    untrained model, the loss curve; a mode built to fail (``intended``) only where its
    outcome shows it. Untrained embeddings already reach R@1 ≈ 0.97 on digits (raw
    pixels are a good metric there), so "learnt" cannot mean "above the untrained model":
    a run that never learned is one whose R@1 never moved from it."""
    base = figures["untrained_recall@1"]
    nonfinite = figures["nonfinite"] or not math.isfinite(figures["final_recall@1"])
    diverged = nonfinite or (intended == "diverged" and figures["final_recall@1"] < base - 0.1)
    unmoved = abs(figures["final_recall@1"] - base) < 0.005 and (
        abs(figures["best_recall@1"] - base) < 0.005
    )
    never = not diverged and unmoved and figures["zero_loss_share"] >= 0.9
    # built to collapse (no term pushes negatives apart) and its loss did reach ~0
    collapsed = intended == "collapsed" and not diverged and figures["final_loss"] < 0.01
    off_vertices = intended == "off_vertices" and unmoved
    # learnt something that hurts: finite, but well below the untrained model's R@1
    degraded = not diverged and figures["final_recall@1"] < base - 0.1
    # the generalisation gap widening: test R@1 3 points below its best (beyond the
    # noise of a few hundred queries) while the training loss went on falling
    overfit = (
        not diverged
        and figures["best_recall@1"] - figures["final_recall@1"] >= 0.03
        and figures["loss_at_final_recall"] < figures["loss_at_best_recall"]
    )
    return {
        "diverged": bool(diverged),
        "never_learned": bool(never),
        "collapsed": bool(collapsed),
        "norms_to_eps": bool(figures["final_norm"] <= 1e-3 * max(figures["first_norm"], 1e-12)),
        "overfit": bool(overfit),
        "unbalanced": False,
        "off_vertices": bool(off_vertices),
        "degraded": bool(degraded),
        "untrustworthy": bool(diverged or never or collapsed),
    }


def half_of(group: str, seed: int) -> str:
    """Calibrate or report: seeds alternate, starting on a side the group's name picks."""
    start = int(hashlib.sha1(group.encode()).hexdigest(), 16) % 2
    return "calibrate" if (seed + start) % 2 == 0 else "report"


SERIES, RUNS = "real_series.parquet", "real_runs.json"
SYNTHETIC_SERIES, SYNTHETIC_RUNS = "synthetic_series.parquet", "synthetic_runs.json"
NO_LABELS = dict.fromkeys(
    ("diverged", "never_learned", "collapsed", "norms_to_eps", "overfit", "unbalanced",
     "off_vertices", "degraded", "untrustworthy"),
    False,
)  # fmt: skip


def synthetic_run(mode: str, seed: int) -> tuple[pd.DataFrame, dict[str, bool]]:
    """A long run's series in a failure ``mode`` (or ``healthy``), noisy per ``seed``:
    the modes that take thousands of steps to show (the SEC paper's norm variance grows
    over a whole training; overfitting after the peak) are too slow to train here."""
    rng = np.random.default_rng(seed)
    steps = np.arange(10, 3010, 10)
    evals = np.arange(300, 3300, 300)
    t, te = steps / steps[-1], evals / steps[-1]

    def noisy(values: np.ndarray, scale: float) -> np.ndarray:
        return values * (1 + scale * rng.standard_normal(len(values)))

    norm = 1.0 + 4.0 * t
    cv = np.full_like(t, 0.05)
    correlation = 0.8 * np.exp(-6 * t)
    recall = 0.55 + 0.3 * (1 - np.exp(-4 * te))
    loss = 0.6 * np.exp(-2 * t) + 0.05
    labels = dict(NO_LABELS)
    if mode == "unbalanced":  # no SEC: norms spread, gradients follow 1/‖f‖
        cv = 0.1 + 0.4 * t
        correlation = 0.5 + 0.3 * t
        recall = 0.5 + 0.2 * (1 - np.exp(-3 * te))
        labels["unbalanced"] = True
    elif mode == "norms_to_eps":  # an L2 pull to 0 that wins over thousands of steps
        norm = np.geomspace(1.0, 1e-5, len(t))
        labels["norms_to_eps"] = True
    elif mode == "overfit":  # the test classes peak at a third of the run, then fall
        recall = 0.55 + 0.35 * np.exp(-(((te - 0.33) / 0.35) ** 2)) - 0.1 * np.clip(te - 0.33, 0, 1)
        loss = 0.6 * np.exp(-4 * t) + 0.01
        labels["overfit"] = True
    norm = noisy(norm, 0.02)
    cv = np.abs(noisy(cv, 0.1))
    train = {
        "loss/total": np.abs(noisy(loss, 0.1)),
        "loss/metric": np.abs(noisy(loss, 0.1)),
        "mining/active_fraction": np.clip(noisy(0.3 * np.exp(-t) + 0.05, 0.1), 0, 1),
        "norm/mean": norm,
        "norm/min": norm * (1 - 2 * cv).clip(0.05),
        "norm/max": norm * (1 + 2 * cv),
        "norm/var": (cv * norm) ** 2,
        "norm/cv": cv,
        "grad/norm_inv_corr": np.clip(correlation + 0.05 * rng.standard_normal(len(t)), -1, 1),
        "direction/update_ratio": 1 + 3 * cv,
    }
    evaluation = {
        "recall@1": np.clip(recall + 0.005 * rng.standard_normal(len(te)), 0, 1),
        "uniformity": -3.0 + 0.3 * rng.standard_normal(len(te)) * 0.1,
        "effective_rank": 12.0 + 0.5 * rng.standard_normal(len(te)),
    }
    rows = [
        pd.DataFrame({"source": "train", "name": key, "step": steps, "value": values})
        for key, values in train.items()
    ] + [
        pd.DataFrame({"source": "eval", "name": key, "step": evals, "value": values})
        for key, values in evaluation.items()
    ]
    return pd.concat(rows, ignore_index=True), labels


def write_synthetic(out: Path) -> None:
    frames, runs = [], {}
    for mode in ("healthy", "unbalanced", "norms_to_eps", "overfit"):
        for seed in FAILURE_SEEDS:
            group = f"synthetic:{mode}"
            run = f"{group}#s{seed}"
            series, labels = synthetic_run(mode, seed)
            frames.append(series.assign(run=run))
            runs[run] = {"group": group, "seed": seed, "half": half_of(group, seed),
                         "intended": mode, "labels": labels}  # fmt: skip
    save(out, frames, runs, SYNTHETIC_SERIES, SYNTHETIC_RUNS)


def load(out: Path) -> tuple[list[pd.DataFrame], dict[str, Any]]:
    """What an earlier generation into ``out`` wrote (to go on where it stopped)."""
    if not (out / RUNS).exists():
        return [], {}
    series = pd.read_parquet(out / SERIES)
    series = series.astype({"run": str, "source": str, "name": str})
    return [series], json.loads((out / RUNS).read_text())


def dump_runs(runs: dict[str, Any]) -> str:
    """One run a line: compact, and a change to one run is a one-line diff."""
    lines = [
        f"{json.dumps(name)}: {json.dumps(run, sort_keys=True)}"
        for name, run in sorted(runs.items())
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def save(
    out: Path,
    frames: list[pd.DataFrame],
    runs: dict[str, Any],
    series_file: str = SERIES,
    runs_file: str = RUNS,
) -> None:
    """The series as compact Parquet (categories, float32) and the runs' descriptions."""
    out.mkdir(parents=True, exist_ok=True)
    series = pd.concat(frames, ignore_index=True)[["run", "source", "name", "step", "value"]]
    series = series.astype({"run": "category", "source": "category", "name": "category",
                            "step": "int32", "value": "float32"})  # fmt: skip
    series.to_parquet(out / series_file, index=False, compression="zstd")
    (out / runs_file).write_text(dump_runs(runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", default="", help="only the groups containing this (a check)")
    parser.add_argument("--synthetic-only", action="store_true")
    parser.add_argument(
        "--relabel", action="store_true", help="only decide the labels again from the figures"
    )
    args = parser.parse_args(argv)
    write_synthetic(args.out)
    if args.synthetic_only:
        return 0
    if args.relabel:  # figures and labels decided again from the stored series
        runs = json.loads((args.out / RUNS).read_text())
        series = pd.read_parquet(args.out / SERIES).astype({"run": str, "source": str, "name": str})
        for name, run in runs.items():
            rows = series[series["run"] == name]
            train_rows = rows[rows["source"] == "train"][["step", "name", "value"]]
            eval_rows = rows[rows["source"] == "eval"][["step", "name", "value"]]
            base = run["figures"]["untrained_recall@1"]
            run["figures"] = outcome(train_rows.astype({"value": float}),
                                     eval_rows.astype({"value": float}), base)  # fmt: skip
            run["labels"] = labels_of(run["figures"], run["intended"])
        (args.out / RUNS).write_text(dump_runs(runs))
        return 0
    import torch

    torch.set_num_threads(1)
    plan = [(g, c, "healthy", s) for g, c in preset_runs() for s in PRESET_SEEDS]
    plan += [(g, c, "healthy", s) for g, c in healthy_extra_runs() for s in PRESET_SEEDS]
    plan += [(g, c, mode, s) for g, c, mode in failure_runs() for s in FAILURE_SEEDS]
    plan = [item for item in plan if args.only in item[0]]
    frames, runs = load(args.out)
    baselines: dict[str, float] = {}
    started = time.process_time()
    for index, (group, config, intended, seed) in enumerate(plan):
        run = f"{group}#s{seed}"
        if run in runs:  # kept from an earlier, interrupted generation
            continue
        config = corpus_config(config, seed)
        base_key = json.dumps([config["data"], config["model"], seed], sort_keys=True)
        if base_key not in baselines:
            _, base_evals, _ = train(untrained(config))
            recall = base_evals[base_evals["name"] == "recall@1"]["value"]
            baselines[base_key] = float(recall.iloc[-1])
        train_rows, eval_rows, stopped = train(config)
        figures = outcome(train_rows, eval_rows, baselines[base_key])
        runs[run] = {
            "group": group,
            "seed": seed,
            "half": half_of(group, seed),
            "intended": intended,
            "stopped_nonfinite": stopped,
            "labels": labels_of(figures, intended),
            "figures": figures,
            "config": config,
        }
        for source, rows in (("train", train_rows), ("eval", eval_rows)):
            frames.append(rows.assign(run=run, source=source))
        labels = [name for name, on in runs[run]["labels"].items() if on]
        recall = f"R@1 {figures['final_recall@1']:.3f} / {figures['untrained_recall@1']:.3f}"
        print(f"[{index + 1}/{len(plan)}] {run}: {labels} {recall} untrained, "
              f"cpu {time.process_time() - started:.0f}s", file=sys.stderr, flush=True)  # fmt: skip
        if len(runs) % 10 == 0:
            save(args.out, frames, runs)
    save(args.out, frames, runs)
    print(f"{len(runs)} runs, cpu {time.process_time() - started:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
