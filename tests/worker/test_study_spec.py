"""Study files: what they declare, and every kind of bad input refused with one line
naming the field before anything is created or queued."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from sphere_engine.config import ConfigError
from worker.study.spec import check_spec, load_spec, parse_spec
from worker.study.storage import list_study_ids

BASE: dict[str, Any] = {
    "data": {
        "name": "synthetic", "batch_size": 8, "samples_per_class": 2,
        "options": {"num_classes": 16, "dim": 8, "samples_per_class": 20},
    },
    "model": {"name": "mlp", "embedding_dim": 8},
    "training": {"steps": 20, "device": "cpu"},
    "diagnostics": {"eval_every": 10, "eval_max_samples": 200},
}  # fmt: skip

STUDY: dict[str, Any] = {
    "name": "tiny",
    "folds": 2,
    "trials": 2,
    "reproductions": 2,
    "base": BASE,
    "arms": {
        "triplet": {
            "set": {"objective.name": "triplet"},
            "space": {
                "objective.options.margin": {"type": "float", "low": 0.05, "high": 0.5},
                "optimizer.lr": {"type": "log_float", "low": 1e-4, "high": 1e-2},
            },
        },
        "ms": {
            "set": {"objective.name": "multi_similarity"},
            "space": {"optimizer.lr": {"type": "log_float", "low": 1e-4, "high": 1e-2}},
        },
    },
}


def study(**changes: Any) -> dict[str, Any]:
    table = copy.deepcopy(STUDY)
    table.update(changes)
    return table


STUDY_TOML = """
name = "tiny"
folds = 2
trials = 2
reproductions = 2

[base.data]
name = "synthetic"
batch_size = 8
samples_per_class = 2
options = { num_classes = 16, dim = 8, samples_per_class = 20 }
[base.model]
name = "mlp"
embedding_dim = 8
[base.training]
steps = 20
device = "cpu"
[base.diagnostics]
eval_every = 10
eval_max_samples = 200

[arms.triplet]
set = { "objective.name" = "triplet" }
[arms.triplet.space]
"objective.options.margin" = { type = "float", low = 0.05, high = 0.5 }
"optimizer.lr" = { type = "log_float", low = 1e-4, high = 1e-2 }

[arms.ms]
set = { "objective.name" = "multi_similarity" }
space = { "optimizer.lr" = { type = "log_float", low = 1e-4, high = 1e-2 } }
"""


def test_a_study_file_declares_arms_spaces_and_one_budget(tmp_path: Path) -> None:
    path = tmp_path / "study.toml"
    path.write_text(STUDY_TOML)
    spec = load_spec(path)
    assert spec == parse_spec(STUDY)
    assert [arm.name for arm in spec.arms] == ["triplet", "ms"]
    assert (spec.trials, spec.folds, spec.reproductions, spec.metric) == (2, 2, 2, "map@r")
    assert spec.sampler == "tpe"
    triplet = spec.arm("triplet")
    assert [(d.path, d.kind) for d in triplet.space] == [
        ("objective.options.margin", "float"),
        ("optimizer.lr", "log_float"),
    ]
    config = triplet.config(spec.base, {"objective.options.margin": 0.2})
    assert config["objective"] == {"name": "triplet", "options": {"margin": 0.2}}
    assert parse_spec(spec.to_dict()) == spec  # what the study folder keeps reads back


def _space(arm: str, path: str, dim: Any) -> dict[str, Any]:
    table = copy.deepcopy(STUDY)
    table["arms"][arm]["space"][path] = dim
    return table


BAD = [
    (_space("ms", "optimizer.learning_rate", {"type": "float", "low": 0.1, "high": 0.2}),
     "arms.ms.space.optimizer.learning_rate", "not a config field"),
    (_space("ms", "optimiser.lr", {"type": "float", "low": 0.1, "high": 0.2}),
     "arms.ms.space.optimiser.lr", "not a config field"),
    (_space("ms", "training.steps", {"type": "float", "low": 1.0, "high": 5.0}),
     "arms.ms.space.training.steps", "which is a int field"),
    (_space("ms", "optimizer.momentum", {"type": "float", "low": 0.5, "high": 1.5}),
     "arms.ms.space.optimizer.momentum", "above the maximum 1.0"),
    (_space("ms", "optimizer.name", {"type": "int", "low": 1, "high": 3}),
     "arms.ms.space.optimizer.name", "an int range"),
    (_space("ms", "optimizer.lr", {"type": "log_float", "low": 0.0, "high": 0.1}),
     "arms.ms.space.optimizer.lr.low", "must start above 0"),
    (_space("ms", "optimizer.lr", {"type": "float", "low": 0.2, "high": 0.1}),
     "arms.ms.space.optimizer.lr.high", "must be above low"),
    (_space("ms", "optimizer.lr", {"type": "gaussian", "low": 0.0, "high": 0.1}),
     "arms.ms.space.optimizer.lr.type", "not one of"),
    (_space("triplet", "objective.options.margin", {"type": "float", "low": -1.0, "high": 0.5}),
     "arms.triplet.space.objective.options.margin", "gives an invalid run"),
    (_space("ms", "regularizer.name", {"type": "categorical", "choices": ["sec", "nope"]}),
     "arms.ms.space.regularizer.name", "'nope' gives an invalid run"),
    (study(trials=0), "trials", "at least 1 trial"),
    (study(folds=9), "folds", "only 8 classes"),
    (study(metric="nmi"), "metric", "not computed by the validation evaluation"),
    (study(metric="recall@3"), "metric", "not computed by the validation evaluation"),
    (study(sampler="cma"), "sampler", "not one of"),
    (study(arms={}), "arms", "at least one arm"),
    (study(base={**BASE, "data": {**BASE["data"], "split": "standard"}}), "base.data.split",
     "class_disjoint"),
    (study(seeds=[1]), "seeds", "unknown key"),
]  # fmt: skip


@pytest.mark.parametrize(("table", "field", "words"), BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_bad_input_is_one_line_naming_the_field(table, field, words) -> None:
    with pytest.raises(ConfigError) as caught:
        check_spec(parse_spec(table))
    assert caught.value.path == field
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unequal_budgets_are_refused() -> None:
    table = study()
    del table["trials"]
    table["arms"]["triplet"]["trials"] = 3
    table["arms"]["ms"]["trials"] = 2
    with pytest.raises(ConfigError, match="every arm gets the same number of trials") as caught:
        parse_spec(table)
    assert caught.value.path.startswith("arms.") and caught.value.path.endswith(".trials")
    table = study()
    table["arms"]["ms"]["trials"] = 3
    with pytest.raises(ConfigError, match="differs from trials = 2"):
        parse_spec(table)


def test_the_cli_refuses_bad_input_with_one_line_and_creates_nothing(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from worker.cli import main

    path = tmp_path / "bad.toml"
    path.write_text(STUDY_TOML.replace("trials = 2", "trials = 0"))
    before = list_study_ids(home)
    assert main(["study", "run", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: trials: 0: the budget must be at least 1 trial per arm"
    assert list_study_ids(home) == before
    assert main(["study", "status", "no-such-study"]) == 2
    assert "study 'no-such-study' does not exist" in capsys.readouterr().err
