"""Runs recorded over HTTP from a machine without the store's folder (``db.remote`` →
the ingest service ``worker.ingest``): real server and writer processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ingest_fixtures import TOKEN, Server
from test_local_run import CONFIG
from worker_fixtures import REPO, wait_for

from db import queries
from db.lost_runs import RECONNECTING, mark_lost_runs
from db.query_results import evaluation_steps, query_results
from db.remote.client import IngestRefused
from db.remote.store import RemoteStore
from db.remote.wire import encode
from db.schema import SCALARS
from db.store import RunStore
from db.thumbnails import has_thumbnails, snapshot_samples
from worker.cli import main
from worker.ingest.apply import apply_batches
from worker.redis_server import free_port

WRITER = Path(__file__).with_name("ingest_writer.py")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Server:
    running = Server(tmp_path_factory.mktemp("ingest") / "stack-home", free_port())
    yield running
    running.close()


def writer(home: Path, steps: int, pause: float, url: str | None) -> subprocess.Popen:
    env = {**os.environ, "SPHERESCOPE_HOME": str(home), "PYTHONPATH": str(REPO)}
    env["SPHERESCOPE_HEARTBEAT_S"] = "0.5"
    env.pop("SPHERESCOPE_URL", None)
    if url:
        env.update(SPHERESCOPE_URL=url, SPHERESCOPE_TOKEN=TOKEN)
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(steps), str(pause)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen, timeout_s: float = 240) -> tuple[str, str]:
    out, err = process.communicate(timeout=timeout_s)
    assert process.returncode == 0, err
    return out.split()[0], err


def values(store: RunStore, run_id: str) -> pd.DataFrame:
    names = queries.metric_names(store, run_id)
    frame = queries.metric_series(store, run_id, names, max_points=100_000)
    return frame.sort_values(["name", "step"]).reset_index(drop=True)


def test_a_run_written_through_the_url_appears_whole_in_the_stacks_store(server, tmp_path) -> None:
    # the same writer twice at once: into a store of its own, and from an empty home
    # through SPHERESCOPE_URL
    local = writer(tmp_path / "local", 6, 0.0, None)
    remote = writer(tmp_path / "elsewhere", 6, 0.0, server.url)
    local_id, _ = finished(local)
    remote_id, _ = finished(remote)
    mine, stack = RunStore(tmp_path / "local"), RunStore(server.home)

    record, expected = stack.get_run(remote_id), mine.get_run(local_id)
    assert (record.status, record.name, record.kind, record.tags, record.config) == (
        "finished", "remote writer", "external", ["remote"], {"lr": 0.1}
    )  # fmt: skip
    assert record.progress_step == 6 and record.host == expected.host
    assert record.run_info.get("findings") is not None  # evaluated at its end, on the stack
    assert record.run_info.get("device") == expected.run_info.get("device")
    got, want = values(stack, remote_id), values(mine, local_id)
    assert len(want) > 6 * 10  # the diagnostics, not only the loss
    columns = ["name", "step", "value"]
    pd.testing.assert_frame_equal(got[columns], want[columns])
    got_evals = queries.eval_series(stack, remote_id, queries.eval_names(stack, remote_id))
    want_evals = queries.eval_series(mine, local_id, queries.eval_names(mine, local_id))
    assert len(got_evals) == len(want_evals) > 0
    assert queries.snapshot_steps(stack, remote_id) == [3, 6]
    assert evaluation_steps(stack, remote_id) == [3, 6]
    assert len(query_results(stack, remote_id, 6)) == len(query_results(mine, local_id, 6))
    np.testing.assert_array_equal(
        snapshot_samples(stack, remote_id, 6), snapshot_samples(mine, local_id, 6)
    )
    assert has_thumbnails(stack, remote_id)
    # the writer's own home holds no store record, and no spool once the stack has all
    elsewhere = tmp_path / "elsewhere"
    assert not (elsewhere / "runs" / remote_id / "meta.json").exists()
    assert not (elsewhere / "spool").exists()  # its folder was the only one


def test_the_server_killed_and_restarted_mid_run_stores_every_step_once_in_order(
    tmp_path, monkeypatch
) -> None:
    server = Server(tmp_path / "stack-home", free_port())
    try:
        process = writer(tmp_path / "elsewhere", 40, 0.15, server.url)
        store = RunStore(server.home)

        def progressed() -> bool:
            runs = store.run_ids()
            return bool(runs) and (queries.last_step(store, runs[0]) or 0) >= 8

        wait_for(progressed, 120, "the first steps on the stack")
        server.kill()
        (run_id,) = store.run_ids()
        time.sleep(1.5)
        # the stack's lost-run rule meanwhile: silent, but a remote writer within its grace
        monkeypatch.setenv("SPHERESCOPE_REMOTE_GRACE_S", "600")
        assert mark_lost_runs(store, max_age_s=0.5) == []
        waiting = store.get_run(run_id)
        assert waiting.status == "running"
        assert waiting.status_message.startswith(RECONNECTING), waiting.status_message
        time.sleep(1.0)
        server.start()
        run_id, err = finished(process)
        assert "reconnecting" in err and "reconnected" in err
    finally:
        server.close()
    record = store.get_run(run_id)
    assert record.status == "finished", record.status_message
    loss = queries.metric_series(store, run_id, ["loss/total"], max_points=100_000)
    assert loss["step"].tolist() == list(range(1, 41))  # each step once, in order
    np.testing.assert_allclose(loss["value"], [1.0 / step for step in range(1, 41)])
    assert queries.snapshot_steps(store, run_id) == [20, 40]


def test_a_batch_half_applied_by_a_killed_server_is_applied_again_once(tmp_path) -> None:
    store = RunStore(tmp_path / "home")
    run_id = store.create_run({}, "r", status="running")

    def batch(seq: int, step: int) -> dict:
        return {"seq": seq, "ops": [["scalars", *encode([{"loss": float(step)}, step, 1.0])]]}

    assert apply_batches(store, run_id, [batch(1, 1)]) == 1
    # a server killed after writing batch 2's chunk, before acknowledging it
    ingest = store.run_dir(run_id) / "ingest.json"
    acknowledged = ingest.read_text()
    assert apply_batches(store, run_id, [batch(2, 2)]) == 2
    ingest.write_text(acknowledged)
    chunks = sorted(p.name for p in store.table_dir(run_id, SCALARS).iterdir())
    assert len(chunks) == 2
    # the client resends everything it has no answer for; a gap is not applied
    assert apply_batches(store, run_id, [batch(1, 1), batch(2, 2), batch(4, 4)]) == 2
    loss = queries.metric_series(store, run_id, ["loss"])
    assert loss["step"].tolist() == [1, 2]


def test_a_wrong_token_is_refused_in_one_line(server, tmp_path, monkeypatch, capsys) -> None:
    import spherescope

    monkeypatch.setenv("SPHERESCOPE_HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("SPHERESCOPE_URL", server.url)
    monkeypatch.setenv("SPHERESCOPE_TOKEN", "not-the-token")
    before = set(RunStore(server.home).run_ids())
    with pytest.raises(IngestRefused) as refused:
        spherescope.init(name="nope")
    assert str(refused.value) == (f"{server.url} refused the token in SPHERESCOPE_TOKEN (HTTP 401)")
    config = tmp_path / "c.toml"
    config.write_text(CONFIG)
    assert main(["train", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {server.url} refused the token in SPHERESCOPE_TOKEN (HTTP 401)"]
    assert set(RunStore(server.home).run_ids()) == before  # nothing recorded
    log = wait_for(lambda: server.log.read_text().count("wrong token") >= 2 and server.log, 10,
                   "the server's refusals")  # fmt: skip
    refusals = [line for line in log.read_text().splitlines() if "wrong token" in line]
    assert refusals[-1].startswith("spherescope ingest: refused /v1/runs from 127.0.0.1")
    assert len(refusals) == 2  # one line per refused request
    assert not (tmp_path / "elsewhere" / "spool").exists()


def test_spherescope_train_records_through_the_url_and_keeps_checkpoints_local(
    server, tmp_path, monkeypatch, capsys
) -> None:
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv("SPHERESCOPE_HOME", str(elsewhere))
    monkeypatch.setenv("SPHERESCOPE_URL", server.url)
    monkeypatch.setenv("SPHERESCOPE_TOKEN", TOKEN)
    config = tmp_path / "c.toml"
    config.write_text(CONFIG)
    assert main(["train", str(config), "--json", "--project", "vision"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    stack = RunStore(server.home)
    record = stack.get_run(report["run_id"])
    assert (record.status, record.kind, record.progress_step) == ("finished", "train", 12)
    assert record.run_info.get("findings") is not None
    assert [r.run_id for r in stack.list_runs(project="vision")] == [record.run_id]
    loss = queries.metric_series(stack, record.run_id, ["loss/total"], max_points=10_000)
    assert loss["step"].tolist() == list(range(1, 13))
    assert queries.eval_series(stack, record.run_id, ["recall@1"])["step"].tolist() == [6, 12]
    stored = queries.checkpoints(stack, record.run_id)["path"].tolist()
    assert stored and all(path.startswith(str(elsewhere)) for path in stored)
    assert all(Path(path).exists() for path in stored[-1:])  # on the writer's side
    assert not (server.home / "runs" / record.run_id / "checkpoints").exists()


def test_a_silent_remote_run_is_reconnecting_within_its_grace_then_lost(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("SPHERESCOPE_REMOTE_GRACE_S", "100")
    store = RunStore(tmp_path / "home")
    remote = store.create_run({}, "remote", status="running")
    store.set_status(remote, "running", host="gpu-box", remote=True)
    local = store.create_run({}, "local", status="running")
    store.heartbeat(remote)
    store.heartbeat(local)
    soon = datetime.now(UTC) + timedelta(seconds=60)
    assert mark_lost_runs(store, max_age_s=30, now=soon) == [local]
    record = store.get_run(remote)
    assert record.status == "running"
    assert record.status_message.startswith(f"{RECONNECTING}: its writer on gpu-box")
    later = datetime.now(UTC) + timedelta(seconds=140)
    assert mark_lost_runs(store, max_age_s=30, now=later) == [remote]


def test_the_dashboards_cancel_reaches_a_remote_writer(server, tmp_path) -> None:
    remote = RemoteStore(server.url, TOKEN, tmp_path / "elsewhere")
    run_id = remote.create_run({}, "cancel me", kind="external", status="running")
    assert not remote.cancel_requested(run_id)
    stack = RunStore(server.home)
    stack.request_cancel(run_id, "stopped from the dashboard")
    wait_for(lambda: remote.cancel_requested(run_id), 15, "the cancel flag on the writer")
    assert remote.cancel_reason(run_id) == "stopped from the dashboard"
    remote.end_run(run_id, "cancelled", "stopped from the dashboard at step 0")
    assert stack.get_run(run_id).status == "cancelled"


def test_a_remote_run_marked_lost_runs_again_when_its_writer_comes_back(server, tmp_path) -> None:
    remote = RemoteStore(server.url, TOKEN, tmp_path / "elsewhere")
    run_id = remote.create_run({}, "back", kind="external", status="running")
    stack = RunStore(server.home)
    stack.set_status(run_id, "lost", "no heartbeat for 2000 s")  # past the grace
    remote.heartbeat(run_id, 5, 10)
    record = wait_for(
        lambda: (r := stack.get_run(run_id)).status == "running" and r, 15, "the run back"
    )
    assert record.status_message == "its writer came back"
    remote.end_run(run_id, "finished")
    assert stack.get_run(run_id).status == "finished"


def test_runs_are_recorded_over_https(tmp_path, monkeypatch) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = Server(tmp_path / "stack-home", free_port(), tls=(cert, key))
    try:
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the writer trusts the stack's CA
        remote = RemoteStore(server.url, TOKEN, tmp_path / "elsewhere")
        run_id = remote.create_run({}, "tls", kind="external", status="running")
        tracker = remote.tracker(run_id)
        tracker.track_many({"loss/total": 0.5}, 1)
        tracker.flush()
        remote.end_run(run_id, "finished")
    finally:
        server.close()
    stack = RunStore(server.home)
    assert stack.get_run(run_id).status == "finished"
    assert queries.metric_series(stack, run_id, ["loss/total"])["value"].tolist() == [0.5]


def test_a_run_that_ended_while_the_stack_was_down_is_sent_by_sync(
    tmp_path, monkeypatch, capsys
) -> None:
    server = Server(tmp_path / "stack-home", free_port())
    elsewhere = tmp_path / "elsewhere"
    try:
        remote = RemoteStore(server.url, TOKEN, elsewhere)
        run_id = remote.create_run({}, "late", kind="external", status="running")
        server.kill()
        tracker = remote.tracker(run_id)
        for step in (1, 2, 3):
            tracker.track_many({"loss/total": float(step)}, step)
        tracker.flush()
        monkeypatch.setenv("SPHERESCOPE_DRAIN_WAIT_S", "1")
        remote.end_run(run_id, "finished")  # the stack is down: it stays in the spool
        assert "not yet accepted" in capsys.readouterr().err
        assert (elsewhere / "spool" / run_id).is_dir()
        server.start()
        monkeypatch.setenv("SPHERESCOPE_HOME", str(elsewhere))
        monkeypatch.setenv("SPHERESCOPE_URL", server.url)
        monkeypatch.setenv("SPHERESCOPE_TOKEN", TOKEN)
        assert main(["sync"]) == 0
        assert capsys.readouterr().out.strip() == f"run {run_id}: sent"
    finally:
        server.close()
    stack = RunStore(server.home)
    assert stack.get_run(run_id).status == "finished"
    loss = queries.metric_series(stack, run_id, ["loss/total"])
    assert loss["step"].tolist() == [1, 2, 3]
    assert not (elsewhere / "spool" / run_id).exists()
