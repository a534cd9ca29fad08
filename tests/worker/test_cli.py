"""The ``spherescope`` command: argument parsing, delegation, ``status``."""

from __future__ import annotations

import time

import pytest
from worker_fixtures import config, wait_status

from worker import cli, launch, local_run


def test_train_and_analyze_delegate_to_local_run(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(
        local_run, "train_command", lambda *a, **k: calls.append(("train", a, k)) or 3
    )
    monkeypatch.setattr(
        local_run, "analyze_command", lambda *a, **kw: calls.append(("an", a, kw)) or 4
    )

    assert cli.main(["train", "run.toml", "--set", "optimizer.lr=0.1", "--set", "a.b=1"]) == 3
    assert cli.main(["analyze", "emb.npz", "--out", "r.json"]) == 4
    assert cli.main(["analyze", "emb.npz"]) == 4
    assert cli.main(["analyze", "--query", "q.npz", "--gallery", "g.csv", "--ks", "1,10,20"]) == 4

    assert cli.main(["analyze", "emb.npz", "--knn-backend", "torch-cuda"]) == 4

    none = {"query": None, "gallery": None, "ks": None, "knn_backend": "auto"}
    assert calls == [
        (
            "train",
            ("run.toml", ["optimizer.lr=0.1", "a.b=1"]),
            {"name": None, "tags": [], "as_json": False, "project": None},
        ),
        ("an", ("emb.npz", "r.json"), none),
        ("an", ("emb.npz", None), none),
        ("an", (None, None), none | {"query": "q.npz", "gallery": "g.csv", "ks": [1, 10, 20]}),
        ("an", ("emb.npz", None), none | {"knn_backend": "torch-cuda"}),
    ]


@pytest.mark.parametrize("text", ["1,x", "0,5", ","])
def test_analyze_refuses_bad_ks(text: str, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.build_parser().parse_args(["analyze", "e.npz", "--ks", text])
    assert stop.value.code == 2
    assert "--ks" in capsys.readouterr().err


def test_up_and_worker_options_have_safe_defaults() -> None:
    args = cli.build_parser().parse_args(["up"])
    assert (args.host, args.port, args.concurrency, args.no_app) == ("127.0.0.1", 8501, 1, False)
    args = cli.build_parser().parse_args(["up", "--host", "0.0.0.0", "--port", "9000"])
    assert (args.host, args.port) == ("0.0.0.0", 9000)
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args([])


def test_worker_without_redis_url_explains_what_to_set(monkeypatch, capsys) -> None:
    monkeypatch.delenv("REDIS_URL")
    assert cli.main(["worker"]) == 2
    assert "set REDIS_URL" in capsys.readouterr().err


def test_status_lists_queues_and_live_workers_and_reaps(store, worker, capsys, monkeypatch) -> None:
    done = launch(config(steps=5))
    wait_status(store, done, {"finished"}, 120)
    # The worker's own reaper waits 15 s; this process's pass is told to wait 0.5 s.
    monkeypatch.setenv("SPHERESCOPE_LOST_AFTER_S", "0.5")
    silent = store.create_run(config(), status="running")
    store.heartbeat(silent)
    time.sleep(1.0)

    assert cli.main(["status", "--timeout", "2"]) == 0

    out = capsys.readouterr().out
    assert "queues     gpu: 0 waiting, cpu: 0 waiting" in out
    assert f"worker     {worker.node} [cpu] idle" in out
    assert f"marked lost (no heartbeat): {silent}" in out
    assert store.get_run(silent).status == "lost"
