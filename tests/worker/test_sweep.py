"""Sweep expansion: grid × seeds, dotted keys, labels."""

from __future__ import annotations

import pytest

from worker.sweep import expand_grid, set_dotted

BASE = {"optimizer": {"lr": 0.1}, "training": {"steps": 10, "seed": 7}}


def test_grid_times_seeds_gives_every_combination_with_a_label() -> None:
    expanded = expand_grid(
        BASE, {"optimizer.lr": [0.1, 0.2], "model.embedding_dim": [2, 3]}, seeds=[0, 1]
    )

    assert len(expanded) == 8
    labels = [label for _, label in expanded]
    assert labels[0] == "optimizer.lr=0.1 model.embedding_dim=2 seed=0"
    assert len(set(labels)) == 8
    first = expanded[0][0]
    assert first["optimizer"] == {"lr": 0.1}
    assert first["model"] == {"embedding_dim": 2}
    assert first["training"] == {"steps": 10, "seed": 0}
    assert BASE["training"]["seed"] == 7  # the base is not modified


def test_no_seeds_keeps_the_base_seed_and_an_empty_grid_is_the_base() -> None:
    assert expand_grid(BASE, {}, seeds=[]) == [(BASE, "")]
    ((config, label),) = expand_grid(BASE, {"optimizer.lr": [0.5]}, seeds=[])
    assert (config["training"]["seed"], label) == (7, "optimizer.lr=0.5")


@pytest.mark.parametrize(
    ("grid", "seeds", "message"),
    [
        ({"optimizer.lr": []}, [0], "non-empty list"),
        ({"optimizer.lr": "0.1"}, [0], "non-empty list"),
        ({"lr": [0.1]}, [0], "expected section.setting"),
        ({"optimizer.lr.x": [1]}, [0], "'lr' is not a table"),
        ({}, [-1], "not a non-negative integer"),
        ({}, [True], "not a non-negative integer"),
    ],
)
def test_malformed_grids_and_seeds_are_rejected(grid, seeds, message) -> None:
    with pytest.raises(ValueError, match=message):
        expand_grid(BASE, grid, seeds)


def test_set_dotted_creates_missing_sections() -> None:
    config: dict = {}
    set_dotted(config, "regularizer.options.momentum", 0.9)
    assert config == {"regularizer": {"options": {"momentum": 0.9}}}
