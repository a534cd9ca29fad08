"""app/views/compare.py under AppTest: overlay, smoothing, table, diff, groups, CSV."""

from __future__ import annotations

import pytest
from app_fixtures import charts_of, first_paint, live_payloads, open_page, texts

from app.charts.palette import RUN_PALETTE


def _metric_charts(app) -> list[dict]:
    """The metric charts: drawn by the chart element (linked zoom), or on the wall
    clock as Vega-Lite (the page's first chart)."""
    specs = charts_of(app)
    live = sum(len(payload["charts"]) for payload in live_payloads(app))
    return specs[len(specs) - live :] if live else specs[:1]


def _vega_charts(app) -> list[dict]:
    """The page's Vega-Lite charts (heatmaps, the hyperparameter view)."""
    specs = charts_of(app)
    live = sum(len(payload["charts"]) for payload in live_payloads(app))
    return specs[: len(specs) - live]


def test_empty_store_explains_and_links_to_launch(home):
    app = open_page("views/compare.py")
    assert not app.exception
    assert any("No runs to compare yet" in t for t in texts(app.info))


def test_default_metrics_are_the_loss_the_variance_and_the_main_evaluation(filled):
    app = open_page("views/compare.py", {"runs": f"{filled.sec},{filled.plain}"})
    assert not app.exception and not app.error
    wanted = ["loss/total", "norm/var", "eval: recall@1"]
    assert app.multiselect(key="compare.metrics").value == wanted
    assert app.radio(key="compare.x").value == "step"
    assert app.query_params["metrics"] == ",".join(wanted)  # a shareable link


def test_two_runs_overlay_with_stable_colours(filled):
    app = open_page(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    assert not app.exception and not app.error
    assert app.multiselect(key="compare.runs").value == [filled.sec, filled.plain]
    assert app.multiselect(key="compare.metrics").value == ["norm/var"]
    spec = _metric_charts(app)[0]
    color = spec["encoding"]["color"]["scale"]
    ordered = sorted([filled.sec, filled.plain])
    assert color["domain"] == [
        {filled.sec: "sec run", filled.plain: "plain run"}[r] + f" · {r}" for r in ordered
    ]
    assert color["range"] == RUN_PALETTE[:2]


def test_a_fresh_page_draws_the_metric_chart_then_the_panels(filled):
    """Opened afresh: the widgets and the metric chart first; the heatmaps, tables and
    the hyperparameter view in the follow-up run."""
    app = first_paint(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    assert not app.exception and not app.error
    assert len(charts_of(app)) == 1 and not app.dataframe
    app.run()
    assert len(charts_of(app)) > 1 and len(app.dataframe) == 2


def test_final_metrics_table_diff_and_csv(filled):
    app = open_page(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    table = app.dataframe[0].value
    assert list(table.columns) == [
        "run", "status", "NMI", "F1", "R@1", "MAP@R", "norm var (test set)"
    ]  # fmt: skip
    assert table["status"].tolist() == ["finished", "finished"]
    assert table["R@1"].tolist() == [60.0, 80.0]
    # the test set's variance, not the last training batch's (0.1, 0.3)
    assert table["norm var (test set)"].tolist() == pytest.approx([1.0, 3.0])
    diff = app.dataframe[1].value
    assert diff["key"].tolist() == ["regularizer.name", "regularizer.weight"]
    download = app.get("download_button")[0]
    assert download.proto.label == "Download final metrics (CSV)"


def test_smoothing_group_by_and_eval_metrics(filled):
    app = open_page(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    app.slider(key="compare.smoothing").set_value(0.5).run()
    assert not app.exception and not app.error
    app.selectbox(key="compare.group").set_value("regularizer.name").run()
    spec = _metric_charts(app)[0]
    assert spec["title"]["text"] == "norm/var: mean ± std by regularizer.name"
    app.selectbox(key="compare.group").set_value("")
    app.multiselect(key="compare.metrics").set_value(["eval: recall@1"]).run()
    assert not app.exception and not app.error
    spec = _metric_charts(app)[0]
    rows = next(iter(spec["datasets"].values()))
    # smoothing (still 0.5) now applies to evaluations too; constant values stay put
    assert sorted(r["value"] for r in rows) == pytest.approx([0.6, 0.6, 0.8, 0.8])


def test_sweep_selects_its_runs(filled):
    app = open_page("views/compare.py")
    app.selectbox(key="compare.sweep").set_value(filled.sweep_id).run()
    assert sorted(app.multiselect(key="compare.runs").value) == sorted(filled.trained)


def test_eval_metrics_follow_group_by_and_x_axis(filled):
    """An evaluation metric ignored "Group by" (and smoothing), silently."""
    app = open_page(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    app.multiselect(key="compare.metrics").set_value(["eval: recall@1"])
    app.selectbox(key="compare.group").set_value("regularizer.name").run()
    assert not app.exception and not app.error
    spec = _metric_charts(app)[0]
    assert spec["title"]["text"] == "recall@1: mean ± std by regularizer.name"
    rows = next(iter(spec["datasets"].values()))
    assert {r["group"] for r in rows} == {"regularizer.name=sec", "regularizer.name=none"}
    app.radio(key="compare.x").set_value("time").run()
    spec = _metric_charts(app)[0]
    assert spec["layer"][0]["encoding"]["x"]["field"] == "time"


def test_several_metrics_share_one_run_legend(filled):
    app = open_page(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    app.multiselect(key="compare.metrics").set_value(["norm/var", "loss/total", "eval: nmi"])
    app.run()
    assert not app.exception and not app.error
    charts = _metric_charts(app)
    assert len(charts) == 3  # one element: zoom linked across them
    scales = [c.get("encoding", c.get("layer", [{}])[-1].get("encoding", {})) for c in charts]
    assert len({str(e["color"]["scale"]) for e in scales}) == 1  # the runs' colours shared


def test_grouped_final_table_and_hyperparameter_view(filled):
    app = open_page(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    app.selectbox(key="compare.group").set_value("regularizer.weight").run()
    assert not app.exception and not app.error
    grouped = app.dataframe[0].value
    assert grouped["regularizer.weight"].tolist() == [
        "regularizer.weight=0.0",
        "regularizer.weight=0.5",
    ]
    assert grouped["R@1"].tolist() == ["80.00 ± 0.00 (1)", "60.00 ± 0.00 (1)"]
    app.selectbox(key="compare.hp_key").set_value("regularizer.weight")
    app.selectbox(key="compare.hp_metric").set_value("R@1").run()
    hyper = _vega_charts(app)[-1]
    rows = next(iter(hyper["datasets"].values()))
    assert sorted((r["x"], r["mean"]) for r in rows) == [(0.0, 80.0), (0.5, 60.0)]


def test_wall_clock_x_axis(filled):
    """Compare offers the wall clock too; a grouping cannot average runs
    at different times, so it draws each run and says so."""
    app = open_page(
        "views/compare.py", {"runs": f"{filled.sec},{filled.plain}", "metrics": "norm/var"}
    )
    app.multiselect(key="compare.metrics").set_value(["norm/var"])
    app.radio(key="compare.x").set_value("clock").run()
    assert not app.exception and not app.error
    spec = charts_of(app)[0]
    x = spec["encoding"]["x"]
    assert (x["field"], x["type"]) == ("clock", "temporal")
    app.selectbox(key="compare.group").set_value("regularizer.name").run()
    assert not app.exception and not app.error
    assert any("wall-clock" in t for t in texts(app.caption))
    spec = charts_of(app)[0]
    assert spec["encoding"]["x"]["field"] == "clock"
    assert len({r["run"] for r in next(iter(spec["datasets"].values()))}) == 2  # per run
