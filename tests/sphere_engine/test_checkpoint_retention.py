"""training.keep_checkpoints: which checkpoints a run keeps, applied as it goes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sphere_engine.catalogue.retention import kept_steps
from sphere_engine.config import ConfigError
from sphere_engine.tracking import InMemoryTracker
from sphere_engine.train import run_training
from tests.sphere_engine.test_train import digits_config

SCORES = {2: 0.5, 4: 0.9, 6: 0.7}


@pytest.mark.parametrize(
    ("policy", "kept"),
    [
        ("all", {1, 2, 3, 4, 5, 6}),
        ("last", {6}),
        ("best", {4}),
        ("last+best", {4, 6}),
        ("2", {5, 6}),
        ("1", {6}),
    ],
)
def test_an_ended_run_keeps_exactly_what_its_policy_says(policy: str, kept: set[int]) -> None:
    assert kept_steps(policy, range(1, 7), SCORES, 6, finished=True) == kept


def test_checkpoints_not_yet_evaluated_are_kept_while_the_run_goes() -> None:
    # step 4 scored best so far; 5 and 6 may still be evaluated (background evaluation)
    assert kept_steps("best", range(1, 7), {2: 0.5, 4: 0.9}, 4) == {4, 5, 6}
    assert kept_steps("last+best", [2, 4], {}, 4, finished=True) == {4}


def test_a_bad_policy_is_a_config_error_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"training\.keep_checkpoints") as caught:
        digits_config(training={"keep_checkpoints": "most"})
    assert caught.value.path == "training.keep_checkpoints"
    with pytest.raises(ConfigError, match=r"training\.keep_checkpoints"):
        digits_config(training={"keep_checkpoints": "0"})


def _steps(folder: Path) -> set[int]:
    return {int(p.stem.split("_")[1]) for p in folder.glob("step_*.pt")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[int, float]]]:
    """One 6-step run per policy, a checkpoint every step, an evaluation every 2."""
    done = {}
    for policy in ("all", "2", "last+best"):
        folder = tmp_path_factory.mktemp(f"keep-{policy}")
        config = digits_config(
            training={"checkpoint_dir": str(folder), "checkpoint_every": 1,
                      "keep_checkpoints": policy},
            diagnostics={"eval_every": 2},
        )  # fmt: skip
        tracker = InMemoryTracker()
        run_training(config, tracker)
        done[policy] = (folder, dict(tracker.eval_series("recall@1")))
    return done


def test_training_applies_the_policy_as_it_goes(runs) -> None:
    folder, scores = runs["all"]
    assert _steps(folder) == {1, 2, 3, 4, 5, 6}
    folder, _ = runs["2"]
    assert _steps(folder) == {5, 6}
    folder, scores = runs["last+best"]
    assert set(scores) == {2, 4, 6}
    best = max(scores, key=lambda step: (scores[step], step))
    assert _steps(folder) == {6, best}
