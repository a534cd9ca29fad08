"""app/views/compare.py under AppTest: overlay, smoothing, table, diff, groups, CSV."""

from __future__ import annotations

import pytest
from app_fixtures import charts_of, open_page, texts

from app import charts


def test_empty_store_explains_and_links_to_launch(home):
    app = open_page("views/compare.py")
    assert not app.exception
    assert any("No runs to compare yet" in t for t in texts(app.info))


def test_two_runs_overlay_with_stable_colours(filled):
    app = open_page("views/compare.py", {"runs": f"{filled.sec},{filled.plain}"})
    assert not app.exception and not app.error
    assert app.multiselect(key="compare.runs").value == [filled.sec, filled.plain]
    assert app.selectbox(key="compare.metric").value == "norm/var"
    (spec,) = charts_of(app)
    color = spec["encoding"]["color"]["scale"]
    ordered = sorted([filled.sec, filled.plain])
    assert color["domain"] == [
        {filled.sec: "sec run", filled.plain: "plain run"}[r] + f" · {r}" for r in ordered
    ]
    assert color["range"] == charts.RUN_PALETTE[:2]


def test_final_metrics_table_diff_and_csv(filled):
    app = open_page("views/compare.py", {"runs": f"{filled.sec},{filled.plain}"})
    table = app.dataframe[0].value
    assert list(table.columns) == ["run", "NMI", "F1", "R@1", "MAP@R", "norm var (test set)"]
    assert table["R@1"].tolist() == [60.0, 80.0]
    # the test set's variance, not the last training batch's (0.1, 0.3)
    assert table["norm var (test set)"].tolist() == pytest.approx([1.0, 3.0])
    diff = app.dataframe[1].value
    assert diff["key"].tolist() == ["regularizer.name", "regularizer.weight"]
    download = app.get("download_button")[0]
    assert download.proto.label == "Download final metrics (CSV)"


def test_smoothing_group_by_and_eval_metrics(filled):
    app = open_page("views/compare.py", {"runs": f"{filled.sec},{filled.plain}"})
    app.slider(key="compare.smoothing").set_value(0.5).run()
    assert not app.exception and not app.error
    app.selectbox(key="compare.group").set_value("regularizer.name").run()
    (spec,) = charts_of(app)
    assert spec["title"]["text"] == "norm/var: mean ± std by regularizer.name"
    app.selectbox(key="compare.group").set_value("")
    app.selectbox(key="compare.metric").set_value("eval: recall@1").run()
    assert not app.exception and not app.error
    (spec,) = charts_of(app)
    rows = next(iter(spec["datasets"].values()))
    assert sorted(r["value"] for r in rows) == [0.6, 0.6, 0.8, 0.8]


def test_sweep_selects_its_runs(filled):
    app = open_page("views/compare.py")
    app.selectbox(key="compare.sweep").set_value(filled.sweep_id).run()
    assert sorted(app.multiselect(key="compare.runs").value) == sorted(filled.trained)
