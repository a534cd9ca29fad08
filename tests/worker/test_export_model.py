"""spherescope export-model / embed on a run trained here: the file, its check, the
record in the run's folder, the one-line refusals, and embed → analyze."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tiny_configs import DIGITS_20_STEPS as CONFIG

from db.model_exports import model_exports
from db.store import RunStore
from worker import cli


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(home, run id) of a 20-step digits run (pixels standardised per feature) with its
    last checkpoint."""
    home = tmp_path_factory.mktemp("home")
    config = home / "run.toml"
    config.write_text(CONFIG)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPHERESCOPE_HOME", str(home))
        assert cli.main(["train", str(config)]) == 0
    (run_id,) = RunStore(home).run_ids()
    return home, run_id


@pytest.fixture
def store(trained, monkeypatch) -> RunStore:
    monkeypatch.setenv("SPHERESCOPE_HOME", str(trained[0]))
    return RunStore(trained[0])


def test_export_is_checked_and_recorded(trained, store, tmp_path, capsys):
    run_id = trained[1]
    out = tmp_path / "model.onnx"
    assert cli.main(["export-model", run_id, "--format", "onnx", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "max(1 - cos) = " in printed and "over 896 samples" in printed
    entry = model_exports(store.files, run_id)[-1]
    assert entry["file"] == str(out.resolve()) and entry["format"] == "onnx"
    assert entry["step"] == 20 and entry["check"]["passed"] is True
    assert entry["check"]["max_one_minus_cos"] <= 1e-5
    assert {"recall@1", "map@r", "nmi"} <= set(entry["check"]["metric_gaps"])
    import onnx

    props = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    metadata = json.loads(props["spherescope"])
    assert metadata["run_id"] == run_id and len(metadata["config_hash"]) == 16
    assert metadata["preprocessing"]["input_shape"] == [64]


def test_failed_check_keeps_the_file_as_failed_and_exits_1(trained, store, tmp_path, monkeypatch):
    from sphere_engine.export import run_model

    real = run_model.preprocessing_of
    monkeypatch.setattr(
        run_model, "preprocessing_of", lambda *a: real(*a) | {"mean": 0.0, "std": 1.0}
    )
    out = tmp_path / "model.pt"
    assert cli.main(["export-model", trained[1], "--format", "torchscript", "--out", str(out)]) == 1
    assert not out.exists() and (tmp_path / "model.pt.failed").is_file()
    entry = model_exports(store.files, trained[1])[-1]
    assert entry["check"]["passed"] is False and entry["file"].endswith("model.pt.failed")


def test_missing_checkpoints_get_one_line(trained, store, tmp_path, capsys):
    out = str(tmp_path / "m.pt")
    only_last = store.create_run({"training": {"keep_checkpoints": "last"}}, "last only")
    assert cli.main(["export-model", only_last, "--format", "onnx", "--out", out,
                     "--checkpoint", "best"]) == 2  # fmt: skip
    assert "kept no best checkpoint" in capsys.readouterr().err
    assert cli.main(["export-model", trained[1], "--format", "onnx", "--out", out,
                     "--checkpoint", "7"]) == 2  # fmt: skip
    assert "no checkpoint at step 7 (steps: 20)" in capsys.readouterr().err
    sdk_run = store.create_run({}, "sdk", kind="external", status="running")
    assert cli.main(["export-model", sdk_run, "--format", "onnx", "--out", out]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "has no checkpoint file here" in error
    assert not Path(out).exists()


def test_best_is_the_kept_checkpoint_with_the_best_main_metric(trained, store):
    from worker.model_export import find_checkpoint

    path, step = find_checkpoint(store, trained[1], "best")
    assert step == 20 and path.name == "step_00000020.pt"  # the one evaluated checkpoint


def test_embed_then_analyze_gives_the_runs_final_metrics(trained, store, tmp_path):
    from worker.model_export import final_evaluation

    model = tmp_path / "model.pt"
    assert (
        cli.main(["export-model", trained[1], "--format", "torchscript", "--out", str(model)]) == 0
    )
    embeddings = tmp_path / "e.npz"
    assert cli.main(["embed", str(model), "digits", "--out", str(embeddings)]) == 0
    arrays = np.load(embeddings)
    assert arrays["embeddings"].shape == (896, 16)
    np.testing.assert_array_equal(arrays["ids"], np.arange(896))
    report = tmp_path / "e.json"
    assert cli.main(["analyze", str(embeddings), "--out", str(report)]) == 0
    analysed = json.loads(report.read_text())
    final = final_evaluation(store, trained[1])
    for name in ("recall@1", "map@r", "r_precision", "nmi", "knn_accuracy"):
        assert analysed[name] == pytest.approx(final[name], abs=1e-9), name
