"""The Run page lists the run's model exports and their checks (``app/panels/model_exports``)."""

from __future__ import annotations

from app_fixtures import Filled, open_page, texts

from db.model_exports import record_model_export
from db.store import RunStore


def entry(fmt: str, passed: bool, gap: float, created: float) -> dict:
    return {
        "format": fmt, "step": 20, "normalized": fmt == "onnx", "weights": "fp32",
        "created_at": created, "file": f"/exports/model.{fmt}" + ("" if passed else ".failed"),
        "check": {
            "max_one_minus_cos": 2e-16 if passed else 0.31, "passed": passed,
            "metric_gaps": {"recall@1": gap, "map@r": gap / 2, "nmi": float("nan")},
        },
    }  # fmt: skip


def test_run_page_lists_exports_newest_first_with_their_checks(
    store: RunStore, filled_fresh: Filled
):
    run_id = filled_fresh.sec
    record_model_export(store.files, run_id, entry("onnx", True, 0.0, 1_000.0))
    record_model_export(store.files, run_id, entry("torchscript", False, 0.125, 2_000.0))
    app = open_page("views/run.py", {"run_id": run_id})
    assert not app.exception and not app.error
    (expander,) = [e for e in app.expander if e.label.startswith("Model exports")]
    assert expander.label == "Model exports (2, 1 failed)"
    table = expander.dataframe[0].value
    assert list(table["format"]) == ["torchscript", "onnx"]  # newest first
    assert list(table["check"]) == ["FAILED", "passed"]
    assert table["largest metric gap (points)"].iloc[0] == 12.5
    assert table["metric"].iloc[0] == "recall@1" and table["output"].iloc[1] == "L2-normalised"
    assert table["file"].iloc[0].endswith(".failed")


def test_a_run_without_exports_says_how_to_make_one(filled_fresh: Filled):
    app = open_page("views/run.py", {"run_id": filled_fresh.sec})
    assert not app.exception
    (expander,) = [e for e in app.expander if e.label.startswith("Model exports")]
    assert expander.label == "Model exports (0)"
    assert f"spherescope export-model {filled_fresh.sec}" in texts(expander.code)[0]
