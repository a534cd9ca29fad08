"""``spherescope analyze``, ``export-model`` and ``embed`` with ``SPHERESCOPE_URL``: what
they record goes through the ingest service (a real ``python -m worker.ingest``) into
the stack's store, and the writer's own ``SPHERESCOPE_HOME`` keeps nothing but its
(emptied) spool; compared with the same command recorded into a local store."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ingest_fixtures import TOKEN, Server
from tiny_configs import DIGITS_20_STEPS as TRAIN

from db import queries
from db.model_exports import model_exports
from db.query_results import evaluation_steps, per_class_results, query_results
from db.remote.store import RemoteStore
from db.remote.wire import encode
from db.store import RunStore
from worker.cli import main
from worker.ingest.apply import INGEST_FILE, BadBatch, apply_batches
from worker.redis_server import free_port


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Server:
    running = Server(tmp_path_factory.mktemp("ingest") / "stack-home", free_port())
    yield running
    running.close()


@pytest.fixture(scope="module")
def trained(server, tmp_path_factory) -> tuple[Path, str]:
    """(the writer's home, run id) of a 20-step digits run trained through the URL."""
    elsewhere = tmp_path_factory.mktemp("gpu-box") / "home"
    config = elsewhere.parent / "run.toml"
    config.write_text(TRAIN)
    with pytest.MonkeyPatch.context() as patch:
        _remote_env(patch, server, elsewhere)
        assert main(["train", str(config)]) == 0
    (run_id,) = [r.run_id for r in RunStore(server.home).list_runs(kind="train")]
    return elsewhere, run_id


def _remote_env(patch: pytest.MonkeyPatch, server: Server, home: Path) -> None:
    patch.setenv("SPHERESCOPE_HOME", str(home))
    patch.setenv("SPHERESCOPE_URL", server.url)
    patch.setenv("SPHERESCOPE_TOKEN", TOKEN)


def _local_env(patch: pytest.MonkeyPatch, home: Path) -> None:
    patch.setenv("SPHERESCOPE_HOME", str(home))
    patch.delenv("SPHERESCOPE_URL", raising=False)


def files_outside_the_spool(home: Path) -> list[str]:
    if not home.exists():
        return []
    return [
        str(path.relative_to(home))
        for path in home.rglob("*")
        if path.is_file() and path.relative_to(home).parts[0] != "spool"
    ]


def spooled(home: Path) -> list[str]:
    folder = home / "spool"
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def newest(store: RunStore, kind: str) -> str:
    return store.list_runs(kind=kind)[0].run_id


def evaluations(store: RunStore, run_id: str) -> pd.DataFrame:
    frame = queries.eval_series(store, run_id)[["step", "name", "value"]]
    return frame.sort_values(["name", "step"]).reset_index(drop=True)


def _labelled_embeddings(path: Path) -> None:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(6, 8)) * 3
    labels = np.repeat(np.arange(6), 10)
    vectors = centres[labels] + rng.normal(size=(60, 8))
    names = np.array([f"bird {i}" for i in range(6)])[labels]
    np.savez(path, embeddings=vectors.astype(np.float32), labels=names)


def test_analyze_records_its_run_whole_in_the_stacks_store(server, tmp_path, monkeypatch):
    data = tmp_path / "birds.npz"
    _labelled_embeddings(data)
    here = tmp_path / "local-home"
    _local_env(monkeypatch, here)
    assert main(["analyze", str(data), "--out", str(tmp_path / "local.json")]) == 0
    elsewhere = tmp_path / "elsewhere"
    _remote_env(monkeypatch, server, elsewhere)
    assert main(["analyze", str(data), "--out", str(tmp_path / "remote.json")]) == 0

    local, stack = RunStore(here), RunStore(server.home)
    mine, theirs = newest(local, "analysis"), newest(stack, "analysis")
    record, expected = stack.get_run(theirs), local.get_run(mine)
    assert (record.status, record.kind, record.name) == ("finished", "analysis", "birds.npz")
    assert record.config == expected.config
    assert record.run_info.get("findings") == expected.run_info.get("findings")
    pd.testing.assert_frame_equal(evaluations(stack, theirs), evaluations(local, mine))
    assert queries.snapshot_steps(stack, theirs) == queries.snapshot_steps(local, mine) == [0]
    assert evaluation_steps(stack, theirs) == [0]
    got, want = query_results(stack, theirs, 0), query_results(local, mine, 0)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
    got_classes = per_class_results(stack, theirs, 0)
    assert sorted(got_classes["class_name"]) == [f"bird {i}" for i in range(6)]
    assert files_outside_the_spool(elsewhere) == [] and spooled(elsewhere) == []
    left = sorted(str(p.relative_to(elsewhere)) for p in elsewhere.rglob("*"))
    assert left == [], left  # not even an empty folder: the client's home is as it was


def test_a_face_protocol_analysis_is_recorded_in_the_stacks_store(server, tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    ids = [f"s{s}_{n}.jpg" for s in range(10) for n in range(2)]
    rows = np.repeat(rng.normal(size=(10, 16)), 2, axis=0) + 0.1 * rng.normal(size=(20, 16))
    np.savez(tmp_path / "faces.npz", ids=np.array(ids), embeddings=rows)
    pairs = [f"{a} {b} {int(a[:3] == b[:3])}" for i, a in enumerate(ids) for b in ids[i + 1 :]]
    (tmp_path / "pairs.txt").write_text("\n".join(pairs) + "\n")
    elsewhere = tmp_path / "elsewhere"
    _remote_env(monkeypatch, server, elsewhere)
    argv = ["analyze", str(tmp_path / "faces.npz"), "--pairs", str(tmp_path / "pairs.txt")]
    assert main([*argv, "--out", str(tmp_path / "faces.json")]) == 0
    written = json.loads((tmp_path / "faces.json").read_text())

    stack = RunStore(server.home)
    run_id = newest(stack, "analysis")
    record = stack.get_run(run_id)
    assert record.status == "finished" and record.config["analysis"]["protocol"] == "face"
    stored = dict(zip(*[evaluations(stack, run_id)[c] for c in ("name", "value")], strict=True))
    numbers = {k: v for k, v in written.items() if isinstance(v, float) and k in stored}
    assert numbers and all(stored[k] == pytest.approx(v) for k, v in numbers.items())
    assert files_outside_the_spool(elsewhere) == [] and spooled(elsewhere) == []


def test_export_model_reads_and_records_through_the_stack(server, trained, tmp_path, monkeypatch):
    elsewhere, run_id = trained
    _remote_env(monkeypatch, server, elsewhere)
    before = sorted(p for p in elsewhere.rglob("*") if p.is_file())
    out = tmp_path / "model.onnx"
    argv = ["export-model", run_id, "--format", "onnx", "--out", str(out)]
    assert main([*argv, "--checkpoint", "best"]) == 0  # best: read the stack's evaluations

    stack = RunStore(server.home)
    (entry,) = model_exports(stack.files, run_id)
    assert entry["file"] == str(out.resolve()) and entry["step"] == 20
    assert entry["check"]["passed"] is True and entry["checkpoint"].startswith(str(elsewhere))
    assert {"recall@1", "map@r"} <= set(entry["check"]["metric_gaps"])
    # numbered apart from the run's writer: its own acknowledged stream, the writer's intact
    ingest = json.loads((stack.run_dir(run_id) / INGEST_FILE).read_text())
    assert list(ingest["streams"].values()) == [1] and ingest["acked"] > 1
    # this side gained the exported file only: no export list, no spool left
    assert sorted(p for p in elsewhere.rglob("*") if p.is_file()) == before
    assert not (elsewhere / "runs" / run_id / "model_exports.json").exists()
    assert spooled(elsewhere) == []


def test_embed_records_nothing_and_its_analysis_lands_on_the_stack(
    server, trained, tmp_path, monkeypatch
):
    elsewhere, run_id = trained
    _remote_env(monkeypatch, server, elsewhere)
    model = tmp_path / "model.pt"
    assert main(["export-model", run_id, "--format", "torchscript", "--out", str(model)]) == 0
    stack = RunStore(server.home)
    runs = stack.run_ids()
    before = sorted(p for p in elsewhere.rglob("*") if p.is_file())
    embeddings = tmp_path / "e.npz"
    assert main(["embed", str(model), "digits", "--out", str(embeddings)]) == 0
    # embed writes its .npz only: no run here or on the stack
    assert stack.run_ids() == runs
    assert sorted(p for p in elsewhere.rglob("*") if p.is_file()) == before
    assert main(["analyze", str(embeddings), "--out", str(tmp_path / "e.json")]) == 0
    analysis = newest(stack, "analysis")
    assert stack.get_run(analysis).status == "finished"
    stored = evaluations(stack, analysis).set_index("name")["value"]
    final = evaluations(stack, run_id)
    final = final[final["step"] == final["step"].max()].set_index("name")["value"]
    for name in ("recall@1", "map@r", "r_precision", "nmi"):
        assert stored[name] == pytest.approx(final[name], abs=1e-9), name
    assert spooled(elsewhere) == []


def test_an_export_recorded_while_the_stack_is_down_is_sent_by_sync(tmp_path, monkeypatch, capsys):
    server = Server(tmp_path / "stack-home", free_port())
    elsewhere = tmp_path / "elsewhere"
    try:
        remote = RemoteStore(server.url, TOKEN, elsewhere)
        run_id = remote.create_run({}, "trained here", kind="external", status="running")
        remote.end_run(run_id, "finished")
        server.kill()
        monkeypatch.setenv("SPHERESCOPE_DRAIN_WAIT_S", "1")
        remote.record_model_export(run_id, {"file": "/models/m.onnx", "format": "onnx"})
        assert "not yet accepted" in capsys.readouterr().err
        (left,) = (elsewhere / "spool").iterdir()
        assert left.name.startswith(f"{run_id}.")  # a side stream's spool
        server.start()
        _remote_env(monkeypatch, server, elsewhere)
        assert main(["sync"]) == 0
        assert capsys.readouterr().out.strip() == f"run {run_id}: sent"
    finally:
        server.close()
    stack = RunStore(server.home)
    assert [e["file"] for e in model_exports(stack.files, run_id)] == ["/models/m.onnx"]
    assert spooled(elsewhere) == [] and not left.exists()


def test_a_side_stream_is_numbered_apart_from_the_runs_writer(tmp_path) -> None:
    store = RunStore(tmp_path / "home")
    run_id = store.create_run({}, "r", status="running")

    def scalars(seq: int, step: int) -> dict:
        return {"seq": seq, "ops": [["scalars", *encode([{"loss": float(step)}, step, 1.0])]]}

    export = {"seq": 1, "ops": [["model_export", {"file": "m.onnx"}]]}
    assert apply_batches(store, run_id, [scalars(1, 1), scalars(2, 2)]) == 2
    assert apply_batches(store, run_id, [export], "0badcafe") == 1
    assert apply_batches(store, run_id, [export], "0badcafe") == 1  # a resend: dropped
    assert apply_batches(store, run_id, [scalars(1, 1), scalars(3, 3)]) == 3
    assert [e["file"] for e in model_exports(store.files, run_id)] == ["m.onnx"]
    assert queries.metric_series(store, run_id, ["loss"])["step"].tolist() == [1, 2, 3]
    with pytest.raises(BadBatch, match="malformed stream name"):
        apply_batches(store, run_id, [export], "../../x")
