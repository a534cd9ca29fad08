"""The spherescope console script as a user runs it: version, help, train flags, JSON
result, progress display, export."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from db import queries
from db.store import RunStore
from sphere_engine.metrics.embedding_files import SUFFIXES
from worker.progress import ProgressBar

SCRIPT = str(Path(sys.executable).parent / "spherescope")
CONFIG = """
[data]
name = "digits"
batch_size = 20
samples_per_class = 4
[model]
name = "mlp"
embedding_dim = 16
[objective]
kind = "loss"
name = "triplet"
[training]
steps = 8
[diagnostics]
eval_every = 8
eval_max_samples = 200
"""
SUBCOMMANDS = ("train", "analyze", "export", "up", "worker", "status")
ENVIRONMENT = ("SPHERESCOPE_HOME", "REDIS_URL", "SPHERESCOPE_TOKEN", "SPHERESCOPE_HEARTBEAT_S",
               "SPHERESCOPE_LOST_AFTER_S")  # fmt: skip


def _spherescope(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if home is not None:
        env["SPHERESCOPE_HOME"] = str(home)
    return subprocess.run(
        [SCRIPT, *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_version_is_the_installed_packages() -> None:
    done = _spherescope("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"spherescope {version('spherescope')}"


@pytest.mark.parametrize("command", [(), *((name,) for name in SUBCOMMANDS)])
def test_help_is_plain_text_naming_the_environment_and_the_store(command: tuple[str]) -> None:
    done = _spherescope(*command, "--help")
    assert done.returncode == 0
    text = done.stdout
    assert "`" not in text and "*" not in text
    for variable in ENVIRONMENT:
        assert variable in text, variable
    assert "./spherescope-data" in text  # where runs go by default


def test_help_names_every_environment_variable_the_product_reads() -> None:
    """A variable read anywhere (as a "SPHERESCOPE_..." literal) is in the help's list."""
    from worker.cli import ENVIRONMENT as HELP

    root = Path(__file__).resolve().parents[2]
    read = {
        name
        for package in ("app", "db", "sphere_engine", "spherescope", "worker")
        for source in (root / package).rglob("*.py")
        for name in re.findall(r"[\"'](SPHERESCOPE_[A-Z0-9_]+)[\"']", source.read_text("utf-8"))
    }
    assert "SPHERESCOPE_WORKER_DEVICES" in read
    listed = set(re.findall(r"^  (SPHERESCOPE_[A-Z0-9_]+) ", HELP, flags=re.MULTILINE))
    assert read - listed == set()


def test_analyze_help_lists_exactly_the_accepted_formats() -> None:
    text = _spherescope("analyze", "--help").stdout
    candidates = {".npz", ".npy", ".parquet", ".csv", ".pt", ".pth", ".h5", ".pkl", ".tsv"}
    mentioned = {s for s in candidates if re.search(rf"(?<![\w]){re.escape(s)}\b", text)}
    assert mentioned == set(SUFFIXES)


def test_train_json_name_tags_and_plain_progress(tmp_path: Path) -> None:
    config = tmp_path / "small.toml"
    config.write_text(CONFIG)
    home = tmp_path / "home"
    done = _spherescope(
        "train", str(config), "--name", "tiny", "--tags", "cli, smoke", "--json", home=home
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1  # nothing but the result on stdout
    result = json.loads(lines[0])
    assert (result["status"], result["name"], result["steps"]) == ("finished", "tiny", 8)
    assert 0 <= result["metrics"]["recall@1"] <= 1
    record = queries.get_run(RunStore(home), result["run_id"])
    assert (record.name, record.tags, record.status) == ("tiny", ["cli", "smoke"], "finished")
    # stderr is no terminal here: plain lines with rate, elapsed and ETA, no \r frames
    assert "\r" not in done.stderr
    final = [line for line in done.stderr.splitlines() if line.startswith("step 8/8 (100%)")]
    assert len(final) == 1
    assert re.search(r"steps/s  elapsed \d\d:\d\d  eta 00:00  loss \d", final[0])


def test_train_json_reports_a_bad_config_as_json(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(CONFIG.replace('name = "mlp"', 'name = "nope"'))
    done = _spherescope("train", str(config), "--json", home=tmp_path / "home")
    assert done.returncode == 2
    result = json.loads(done.stdout)
    assert result["status"] == "invalid" and "nope" in result["error"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_progress_is_a_tqdm_bar_with_rate_and_eta() -> None:
    stream = _Terminal()
    bar = ProgressBar(stream)
    assert bar.interactive
    for step in range(1, 51):
        bar.track_many({"loss/total": 0.5, "norm/var": 0.01}, step)
        bar.track_progress(step, 50)
    text = stream.getvalue()
    assert "\r" in text and "50/50" in text
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d, +[\d.]+ ?\w*step/s", text), text[-300:]
    assert "loss 0.5000" in text


def test_export_writes_csv_and_tensorboard_files_of_an_sdk_run(tmp_path: Path) -> None:
    import spherescope

    home = tmp_path / "home"
    with spherescope.init(name="exported", home=str(home)) as run:
        for step in range(1, 4):
            run.log({"loss/total": 1.0 / step}, step=step)
    csv = _spherescope("export", run.id, "--out", str(tmp_path / "csv"), home=home)
    assert csv.returncode == 0, csv.stderr
    assert Path(csv.stdout.splitlines()[0]).name == f"{run.id}-scalars.csv"
    board = _spherescope(
        "export", run.id, "--format", "tensorboard", "--out", str(tmp_path / "tb"), home=home
    )
    assert board.returncode == 0, board.stderr
    events = EventAccumulator(board.stdout.strip())
    events.Reload()
    values = [(e.step, e.value) for e in events.Scalars("loss/total")]
    assert values == [(1, 1.0), (2, 0.5), (3, pytest.approx(1 / 3))]
    ghost = _spherescope("export", "ghost", home=home)
    assert ghost.returncode == 2 and "unknown run id 'ghost'" in ghost.stderr
