"""The verification and robustness panels (app/panels) on the Run and Compare pages."""

from __future__ import annotations

import pandas as pd
from app_fixtures import charts_of, open_page

from app.panels.curve_charts import robustness_chart, roc_chart, tar_table

CONFIG = {"training": {"steps": 10}}


def _record(store, name: str, tar_scale: float, accuracy: float) -> str:
    run_id = store.create_run(CONFIG, name, status="running")
    with store.tracker(run_id, flush_interval=60) as tracker:
        tracker.track_many({"loss/total": 1.0}, 10)
        tracker.track_eval(
            {
                "recall@1": 0.5,
                "verification/auc": 0.9,
                "verification/eer": 0.1,
                "verification/accuracy": 0.88,
                "verification/tar@far=1e-1": 0.8 * tar_scale,
                "verification/tar@far=1e-3": 0.4 * tar_scale,
                "verification/tar@far=1e-4": float("nan"),
                "robustness/fgsm/accuracy@eps=0": accuracy,
                "robustness/fgsm/accuracy@eps=0.1": accuracy / 2,
                "robustness/pgd/accuracy@eps=0": accuracy,
                "robustness/pgd/accuracy@eps=0.1": accuracy / 4,
            },
            10,
        )
        tracker.track_curve("verification/roc", [1e-4, 1e-2, 1.0], [0.2, 0.6, 1.0], 10)
    store.end_run(run_id, "finished")
    return run_id


def _titles(app) -> list[str]:
    return [spec.get("title", {}).get("text") for spec in charts_of(app)]


def test_the_run_page_draws_the_roc_table_and_robustness_curve(store):
    run_id = _record(store, "face", 1.0, 0.9)
    app = open_page("views/run.py", {"run_id": run_id})
    assert not app.exception and not app.error
    assert {"Verification ROC", "Robustness: accuracy under attack"} <= set(_titles(app))
    roc = next(s for s in charts_of(app) if s.get("title", {}).get("text") == "Verification ROC")
    assert roc["encoding"]["x"]["scale"]["type"] == "log"
    table = next(t.value for t in app.dataframe if "TAR@FAR=1e-3" in t.value.columns)
    assert list(table.columns) == [
        "run", "TAR@FAR=1e-1", "TAR@FAR=1e-3", "TAR@FAR=1e-4", "EER", "ROC AUC",
        "accuracy (10-fold)",
    ]  # fmt: skip
    assert table["TAR@FAR=1e-3"].tolist() == [0.4] and table["TAR@FAR=1e-4"].isna().all()


def test_compare_overlays_runs_and_the_paper_table_gains_tar(store):
    first = _record(store, "a", 1.0, 0.9)
    second = _record(store, "b", 0.5, 0.6)
    app = open_page("views/compare.py", {"runs": f"{first},{second}"})
    assert not app.exception and not app.error
    roc = next(s for s in charts_of(app) if s.get("title", {}).get("text") == "Verification ROC")
    rows = next(iter(roc["datasets"].values()))
    assert {r["run_id"] for r in rows} == {first, second}
    assert "Robustness: accuracy under attack" in _titles(app)
    paper = app.dataframe[0].value
    assert "TAR@FAR" in " ".join(map(str, paper.columns))


def test_runs_without_these_metrics_show_no_panel(filled):
    app = open_page("views/run.py", {"run_id": filled.sec})
    assert "Verification ROC" not in _titles(app)
    assert not any("Verification" in str(h.value) for h in app.subheader)


def test_chart_builders():
    curves = pd.DataFrame(
        {"run_id": ["r"] * 3, "point": [0, 1, 2], "far": [0.0, 0.01, 1.0], "tar": [0.1, 0.5, 1]}
    )
    spec = roc_chart(curves).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert [r["far"] for r in rows] == [0.01, 1.0]  # FAR 0 has no log position
    values = pd.DataFrame(
        {
            "run_id": ["r", "r", "r"],
            "attack": ["pgd", "pgd", "fgsm"],
            "metric": ["accuracy", "accuracy", "recall@1"],
            "epsilon": [0.0, 0.1, 0.1],
            "value": [0.9, 0.3, 0.5],
        }
    )
    rows = next(iter(robustness_chart(values, "accuracy").to_dict()["datasets"].values()))
    assert [r["epsilon"] for r in rows] == [0.0, 0.1]
    finals = pd.DataFrame({"run_id": ["r"], "eval:verification/tar@far=1e-2": [0.5]})
    assert tar_table(finals, {"r": "run r"}).to_dict("list") == {
        "run": ["run r"],
        "TAR@FAR=1e-2": [0.5],
    }
