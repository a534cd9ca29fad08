"""The examples run offline, briefly, and leave a finished run in the store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from db import queries
from db.store import RunStore

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    ("script", "arguments", "name"),
    [
        ("own_loop.py", ["--steps", "12"], "digits-own-loop"),
        ("lightning_digits.py", ["--epochs", "1", "--batches-per-epoch", "8"], "digits-lightning"),
    ],
)
def test_example_runs_offline_and_records_a_run(
    script: str, arguments: list[str], name: str, home: Path
) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), "--home", str(home), *arguments],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    store = RunStore(home)
    (record,) = store.list_runs()
    assert (record.name, record.kind, record.status) == (name, "external", "finished")
    assert "norm/var" in queries.metric_names(store, record.run_id)
    assert queries.snapshot_steps(store, record.run_id)  # evaluated at least once
