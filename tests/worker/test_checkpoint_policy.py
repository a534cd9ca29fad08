"""Launched (queued) runs write checkpoints only under SPHERESCOPE_HOME; the CLI may not."""

from __future__ import annotations

from pathlib import Path

import pytest
from worker_fixtures import config, wait_status

from sphere_engine.config import RunConfig
from worker import launch, launch_sweep
from worker.checkpoint_policy import check_checkpoint_dir


def with_dir(path: str) -> RunConfig:
    return RunConfig.from_dict(config(training={"checkpoint_dir": path}))


def test_only_absolute_paths_inside_the_store_are_accepted(tmp_path) -> None:
    home = tmp_path / "home"
    (home / "mine").mkdir(parents=True)
    (home / "escape").symlink_to(tmp_path)
    check_checkpoint_dir(with_dir(""), home)
    check_checkpoint_dir(with_dir(str(home / "mine" / "ckpt")), home)
    for bad in (
        str(tmp_path / "elsewhere"),
        "/etc/cron.d",
        str(home / ".." / "outside"),
        str(home / "escape" / "ckpt"),  # a symbolic link out of the store
        "relative/ckpt",
    ):
        with pytest.raises(ValueError, match=r"^training\.checkpoint_dir: .* not inside"):
            check_checkpoint_dir(with_dir(bad), home)


def test_launch_refuses_a_checkpoint_dir_outside_the_store(store, tmp_path) -> None:
    before = {r.run_id for r in store.list_runs()}
    outside = str(tmp_path / "outside")
    with pytest.raises(ValueError, match=r"^training\.checkpoint_dir: "):
        launch(config(training={"checkpoint_dir": outside}), store=store)
    with pytest.raises(ValueError, match=r"^training\.checkpoint_dir: "):
        launch_sweep(config(), {"training.checkpoint_dir": ["", outside]}, [0], store=store)
    assert {r.run_id for r in store.list_runs()} == before
    assert not Path(outside).exists()


def test_a_launched_run_writes_its_checkpoints_inside_the_store(store, worker) -> None:
    target = store.home / "my-checkpoints"
    run_id = launch(config(steps=10, training={"checkpoint_dir": str(target)}), store=store)
    assert wait_status(store, run_id, {"finished", "failed"}, 180).status == "finished"
    assert (target / "step_00000010.pt").is_file()
