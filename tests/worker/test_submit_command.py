"""``spherescope submit`` without --slurm queues for the workers; ``spherescope cancel``
cancels any run (here a queued Celery run); SLURM options need --slurm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from db.store import RunStore
from worker import cli

CONFIG = """\
[data]
name = "digits"
[model]
name = "mlp"
embedding_dim = 8
[objective]
kind = "loss"
name = "triplet"
[training]
steps = 5
"""


def test_submit_queues_for_the_workers_and_cancel_cancels_it(
    store: RunStore, tmp_path: Path, capsys, idle_broker: None
) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(CONFIG)
    assert cli.main(["submit", str(config), "--name", "queued one", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    record = store.get_run(run_id)
    assert (record.status, record.name, record.executor) == ("queued", "queued one", {})

    assert cli.main(["cancel", run_id]) == 0
    assert capsys.readouterr().out.strip() == f"run {run_id}: cancelled"
    record = store.get_run(run_id)
    assert (record.status, record.status_message) == ("cancelled", "cancelled before it started")


def test_cancel_of_an_unknown_run_is_one_line(capsys) -> None:
    assert cli.main(["cancel", "no-such-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "no-such-run" in err and "\n" not in err


def test_slurm_options_without_slurm_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--partition is a SLURM option: add --slurm"):
        cli.main(["submit", str(tmp_path / "x.toml"), "--partition", "gpu"])
    with pytest.raises(SystemExit, match="slurm time_min: 0 must be an integer >= 1"):
        cli.main(["submit", str(tmp_path / "x.toml"), "--slurm", "--time", "0"])
