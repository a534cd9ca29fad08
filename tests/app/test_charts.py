"""app/charts/: point caps, "N of M points", stable colours, geometry charts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from app.charts.base import MAX_POINTS, TITLE_CHARS, chart_points
from app.charts.best_values import highlight_best
from app.charts.geometry import angle_heatmap, norm_histogram, pca_scatter
from app.charts.line_charts import (
    group_band_chart,
    metric_lines,
    norm_band_chart,
    run_color_scale,
    run_colors,
    sample_norm_chart,
)
from app.charts.palette import RUN_PALETTE
from app.charts.summary import small_multiples


def _lines(runs: int, points: int) -> pd.DataFrame:
    parts = []
    for r in range(runs):
        steps = np.arange(points)
        parts.append(
            pd.DataFrame(
                {
                    "run_id": f"r{r}",
                    "name": "norm/var",
                    "step": steps,
                    "value": np.sin(steps / 50.0) + r,
                    "min": -1.0,
                    "max": 2.0 + r,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def test_metric_lines_caps_points_and_says_n_of_m():
    frame = _lines(3, 4000)
    chart = metric_lines(frame, color="run_id", band=True, title="norm/var")
    shown = chart_points(chart)
    assert 0 < shown <= MAX_POINTS
    assert chart.usermeta["points_note"] == f"{shown:,} of 12,000 points"


def test_metric_lines_without_downsampling_has_no_note():
    chart = metric_lines(_lines(2, 50), color="run_id")
    assert chart_points(chart) == 100
    assert chart.usermeta["points_note"] is None


def test_note_counts_points_dropped_before_the_chart():
    # the database already downsampled 1,000 recorded points to 100
    chart = metric_lines(_lines(1, 100), total=1000)
    assert chart.usermeta["points_note"] == "100 of 1,000 points"


def test_log_scale_drops_non_positive_values():
    frame = pd.DataFrame({"step": [1, 2, 3], "value": [0.0, 1.0, 10.0], "name": "norm/var"})
    chart = metric_lines(frame, log_y=True)
    spec = chart.to_dict()
    assert spec["encoding"]["y"]["scale"]["type"] == "log"
    assert chart_points(chart) == 2


def test_run_colours_are_stable_whatever_the_order():
    first = run_color_scale(["b", "c", "a"]).to_dict()
    second = run_color_scale(["c", "a", "b"]).to_dict()
    assert first == second
    assert first["domain"] == ["a", "b", "c"]
    assert run_colors(["c", "a"]) == {"a": RUN_PALETTE[0], "c": RUN_PALETTE[1]}
    labelled = run_color_scale(["b", "a"], {"a": "SEC · a", "b": "plain · b"})
    assert labelled.to_dict()["domain"] == ["SEC · a", "plain · b"]


def test_norm_band_chart_has_mean_std_and_min_max_layers():
    wide = pd.DataFrame(
        {
            "step": [1, 2],
            "mean": [2.0, 3.0],
            "std": [0.5, 1.0],
            "min": [1.0, 1.5],
            "max": [3.0, 4.5],
        }
    )
    chart = norm_band_chart(wide)
    spec = chart.to_dict()
    assert len(spec["layer"]) == 3
    rows = next(iter(spec["datasets"].values()))
    assert [(r["lower"], r["upper"]) for r in rows] == [(1.5, 2.5), (2.0, 4.0)]


def test_sample_norm_chart_caps_many_tracked_samples():
    frame = pd.DataFrame(
        {
            "sample": np.repeat(np.arange(16), 1000),
            "step": np.tile(np.arange(1000), 16),
            "norm": 1.0,
        }
    )
    chart = sample_norm_chart(frame, total=16000)
    assert chart_points(chart) <= MAX_POINTS
    assert chart.usermeta["points_note"] == f"{chart_points(chart):,} of 16,000 points"


def test_histogram_counts_every_sample():
    chart = norm_histogram(np.array([1.0, 1.1, 2.0, 2.0, 5.0]), bins=4)
    rows = next(iter(chart.to_dict()["datasets"].values()))
    assert sum(r["count"] for r in rows) == 5
    assert len(rows) == 4


def test_angle_heatmap_has_k_squared_cells():
    angles = np.array([[0.0, 90.0], [90.0, 0.0]])
    chart = angle_heatmap(angles, [0, 1])
    rows = next(iter(chart.to_dict()["datasets"].values()))
    assert [(r["class_a"], r["class_b"], r["angle"]) for r in rows] == [
        ("0", "0", 0.0),
        ("0", "1", 90.0),
        ("1", "0", 90.0),
        ("1", "1", 0.0),
    ]


def test_group_band_and_pca_charts_embed_their_rows():
    stats = pd.DataFrame(
        {
            "group": ["g"] * 3,
            "step": [1, 2, 3],
            "mean": [1.0, 2, 3],
            "std": [0.0, 0.1, 0.2],
            "lower": [1.0, 1.9, 2.8],
            "upper": [1.0, 2.1, 3.2],
            "runs": [2, 2, 2],
        }
    )
    assert chart_points(group_band_chart(stats)) == 3
    pca = pd.DataFrame({"pc1": [0.0, 1.0], "pc2": [1.0, 0.0], "label": [0, 1]})
    spec = pca_scatter(pca, explained=(0.75, 0.25)).to_dict()
    assert spec["encoding"]["x"]["title"] == "PC1 (75% of variance)"


def test_highlight_best_marks_one_cell_per_scored_column():
    table = pd.DataFrame({"run": ["a", "b"], "R@1": [80.0, 85.0], "mean norm var": [7.6, 3.2]})
    html = highlight_best(table, {"R@1": True, "mean norm var": False}).to_html()
    assert "row1_col1" in html and "row1_col2" in html
    assert "row0_col1" not in html.split("</style>")[0]
    assert "font-weight: bold" in html


def test_single_series_has_no_legend_and_palette_has_contrast():
    one = pd.DataFrame({"step": [1, 2], "value": [1.0, 2.0], "name": ["loss/total"] * 2})
    assert metric_lines(one).to_dict()["encoding"]["color"]["legend"] is None
    two = pd.concat([one, one.assign(name="loss/sec")])
    assert metric_lines(two).to_dict()["encoding"]["color"]["legend"] is not None

    def luminance(colour: str) -> float:
        red, green, blue = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        return 0.2126 * red + 0.7152 * green + 0.0722 * blue

    # no pastel colours: every class / metric colour is clearly darker than white
    assert max(luminance(c) for c in RUN_PALETTE) < 0.7


def test_final_table_numbers_keep_the_digits_that_separate_runs():
    """The column "norm var": 0.000605 vs 0.00746 showed as 0.00 vs 0.01, a 0.00 cell best."""
    table = pd.DataFrame({"run": ["a", "b"], "R@1": [80.0, 85.5], "norm var": [0.000605, 0.00746]})
    html = highlight_best(table, {"R@1": True, "norm var": False}).to_html()
    assert "0.00060" in html and "0.00746" in html
    assert ">0.00<" not in html and ">0.01<" not in html
    assert ">80.00<" in html and ">85.50<" in html  # at least two decimals, as before


def test_column_decimals_separate_close_values():
    from app.charts.formats import column_decimals

    assert column_decimals([1.0, 2.0]) == 2
    assert column_decimals([0.000605, 0.00746]) == 5
    assert column_decimals([0.12341, 0.12344]) == 5
    assert column_decimals([0.0, float("nan")]) == 2


def test_long_titles_wrap_instead_of_being_cut_off():
    """The gradient chart's one-line title was clipped at the chart's edge."""
    title = "Gradient magnitude vs 1/‖f‖ (correlation) and radial cosine"
    spec = metric_lines(_lines(1, 5), title=title).to_dict()
    lines = spec["title"]["text"]
    assert isinstance(lines, list) and len(lines) == 2
    assert all(len(line) <= TITLE_CHARS for line in lines)
    assert " ".join(lines) == title
    short = metric_lines(_lines(1, 5), title="Loss terms").to_dict()
    assert short["title"]["text"] == "Loss terms"


def test_geometry_charts_take_shared_domains():
    """Side by side, each run had its own axes and colours."""
    hist = norm_histogram(np.array([0.25, 0.3]), domain=(0.2, 0.65)).to_dict()
    assert hist["encoding"]["x"]["scale"]["domain"] == [0.2, 0.65]
    bins = next(iter(hist["datasets"].values()))
    assert bins[0]["start"] == 0.2 and bins[-1]["end"] == 0.65
    pca = pd.DataFrame({"pc1": [0.0, 1.0], "pc2": [1.0, 0.0], "label": [0, 1]})
    spec = pca_scatter(pca, domain=(-2.0, 2.0), classes=[0, 1, 2]).to_dict()
    assert spec["encoding"]["x"]["scale"]["domain"] == [-2.0, 2.0]
    assert spec["encoding"]["color"]["scale"]["domain"] == ["0", "1", "2"]
    assert [row["label"] for row in next(iter(spec["datasets"].values()))] == ["0", "1"]
    angles = angle_heatmap(np.zeros((2, 2)), [0, 1]).to_dict()
    assert angles["encoding"]["color"]["scale"]["domain"] == [0.0, 180.0]


def test_small_multiples_share_one_x_zoom_without_a_warning(recwarn) -> None:
    """Compare's small multiples: zooming one zooms all (one scale-bound parameter over
    every view), and Altair's de-duplication warning stays out of the server log."""
    frame = pd.DataFrame({"step": [1, 2, 3], "value": [0.1, 0.2, 0.3], "name": "norm/var"})
    parts = [metric_lines(frame, title=t) for t in ("a", "b", "c")]
    spec = small_multiples(parts).to_dict()
    (param,) = spec["params"]
    assert param["bind"] == "scales" and param["select"]["encodings"] == ["x"]
    assert len(param["views"]) == 3
    assert not [w for w in recwarn if "deduplicated" in str(w.message)]


def _lab(colour: str) -> tuple[float, float, float]:
    """CIELAB (D65) of a hex colour."""
    linear = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    red, green, blue = [((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in linear]
    x = (0.4124 * red + 0.3576 * green + 0.1805 * blue) / 0.95047
    y = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    z = (0.0193 * red + 0.1192 * green + 0.9505 * blue) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_every_pair_of_run_colours_is_told_apart():
    """Twenty runs of a sweep: no colour is a shade of another (CIE76 distance; the
    old second ten repeated the first ten a shade darker, at 4.6)."""
    labs = [_lab(c) for c in RUN_PALETTE]
    closest = min(
        sum((p - q) ** 2 for p, q in zip(a, b, strict=True)) ** 0.5
        for i, a in enumerate(labs)
        for b in labs[i + 1 :]
    )
    assert len(set(RUN_PALETTE)) == 20 and closest > 20


def test_legends_list_every_run_whole():
    """A legend is a column of whole labels (a row of them was cut off after 3 runs)."""
    names = [f"a run with a long name {i} · 20261125-120000-{i:08x}" for i in range(8)]
    frame = pd.DataFrame({"step": [1, 2] * 8, "value": 1.0, "name": np.repeat(names, 2)})
    legend = metric_lines(frame).to_dict()["encoding"]["color"]["legend"]
    assert legend["columns"] == 1 and legend["labelLimit"] == 0
    assert legend["direction"] == "vertical"


def test_a_loss_term_that_is_zero_throughout_is_not_drawn():
    """η = 0: the regulariser's term is a flat 0 that stretched the loss chart's axis."""
    from app.panels.training_charts import drop_all_zero

    steps = [1, 2, 3]
    part = pd.DataFrame(
        {
            "step": steps * 3,
            "name": ["loss/total"] * 3 + ["loss/metric"] * 3 + ["loss/sec"] * 3,
            "value": [0.9, 0.5, 0.3, 0.9, 0.5, 0.3, 0.0, 0.0, 0.0],
        }
    )
    assert sorted(set(drop_all_zero(part)["name"])) == ["loss/metric", "loss/total"]
    only_zero = part[part["name"] == "loss/sec"]
    assert len(drop_all_zero(only_zero)) == 3  # a chart of nothing but zeros stays


def test_axes_and_tooltips_write_numbers_by_the_one_rule() -> None:
    """Numbers with ad-hoc formats (".5g" here, ".4g" there, none on
    the axes)."""
    from sphere_engine.catalogue.numbers import VEGA_LABEL_EXPR

    spec = metric_lines(_lines(2, 5), title="t").to_dict()
    assert spec["encoding"]["y"]["axis"]["labelExpr"] == VEGA_LABEL_EXPR
    assert spec["encoding"]["x"]["axis"]["format"] == ",d"  # steps: thousands separators
    tooltip = {t["field"]: t for t in spec["encoding"]["tooltip"]}
    assert "value_text" in tooltip and "value" not in tooltip
    (calculate,) = [t for t in spec["transform"] if t.get("as") == "value_text"]
    assert "format(" in calculate["calculate"]


def test_each_loss_term_is_its_own_chart_and_a_zero_term_none() -> None:
    """With η = 0 a loss term's scale flattened the others."""
    from app.panels.training_charts import chart_plan

    plan = chart_plan(frozenset({"loss/total", "loss/metric", "loss/sec", "norm/mean"}))
    loss = [(group.id, keys) for group, keys in plan if group.id.startswith("loss")]
    assert loss == [
        ("loss:loss/total", ["loss/total"]),
        ("loss:loss/metric", ["loss/metric"]),
        ("loss:loss/sec", ["loss/sec"]),
    ]


def test_every_chart_tooltip_writes_numbers_by_the_one_rule() -> None:
    """Tooltips with d3's ",.3r" rounded integer digits
    (a norm of 12,345 read 12,300); each numeric tooltip is now the browser-written
    text of ``format_number``'s rule."""
    import pandas as pd

    from app.charts.findings import evidence_chart
    from app.charts.geometry import pca_scatter
    from app.charts.heatmap import norm_distribution_heatmap
    from app.charts.summary import hyperparameter_chart
    from app.panels.curve_charts import robustness_chart, roc_chart

    cells = pd.DataFrame(
        {"x0": [1], "x1": [2], "lower": [12345.0], "upper": [13000.0], "fraction": [1.0]}
    )
    specs = [
        norm_distribution_heatmap(cells),
        pca_scatter(pd.DataFrame({"pc1": [1.0], "pc2": [2.0], "label": [0]})),
        evidence_chart(
            pd.DataFrame({"source": ["t"], "name": ["n"], "step": [1], "value": [12345.0]}),
            (None, None),
            "t",
        ),
        hyperparameter_chart(
            pd.DataFrame(
                {"x": [1.0], "value": ["1"], "mean": [0.5], "std": [0.1], "runs": [2],
                 "lower": [0.4], "upper": [0.6]}
            ),
            key="k",
            y_title="y",
        ),
        roc_chart(pd.DataFrame({"run_id": ["r"], "far": [0.1], "tar": [0.5], "point": [0]})),
        robustness_chart(
            pd.DataFrame(
                {"run_id": ["r"], "attack": ["pgd"], "metric": ["accuracy"], "epsilon": [0.1],
                 "value": [0.5]}
            ),
            "accuracy",
        ),
    ]  # fmt: skip
    for chart in specs:
        text = json.dumps(chart.to_dict())
        assert ",.3r" not in text and '"format": ".3g"' not in text
        assert "_text" in text and "format(" in text


def test_a_categorical_config_key_is_drawn_as_points_a_numeric_one_as_a_line() -> None:
    import pandas as pd

    from app.charts.summary import hyperparameter_chart

    def marks(x: list, values: list[str]) -> set[str]:
        stats = pd.DataFrame(
            {"x": x, "value": values, "mean": [0.5, 0.6], "std": [0.1, 0.1], "runs": [2, 2],
             "lower": [0.4, 0.5], "upper": [0.6, 0.7]}
        )  # fmt: skip
        spec = hyperparameter_chart(stats, key="k", y_title="y").to_dict()
        return {layer["mark"]["type"] for layer in spec["layer"]}

    assert marks([None, None], ["adam", "sgd"]) == {"errorbar", "point"}
    assert marks([0.1, 0.2], ["0.1", "0.2"]) == {"errorbar", "line"}


def _sparse(points: int = 400) -> pd.DataFrame:
    """A downsampled loss: each bucket's last value 0, its max a spike."""
    steps = np.arange(points) * 50
    return pd.DataFrame(
        {"name": "loss/total", "step": steps, "value": 0.0, "min": 0.0, "max": 1.0 + steps / 1e4}
    )


def test_a_sparse_loss_on_a_log_axis_keeps_its_spikes_as_a_band():
    chart = metric_lines(_sparse(), log_y=True, band=True)
    spec = chart.to_dict()
    (rows,) = spec["datasets"].values()
    assert len(rows) == 400  # no bucket dropped for its last value of 0
    assert all(row["value"] is None or np.isnan(row["value"]) for row in rows)  # no line at 0
    assert {row["min"] for row in rows} == {0.1}  # a decade below the smallest spike
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["area", "line"]


def test_has_band_only_where_buckets_spread():
    from app.charts.line_charts import has_band

    assert has_band(_sparse())
    flat = _sparse().assign(max=0.0)
    assert not has_band(flat)  # raw values: min = max = value
    assert not has_band(_sparse().drop(columns=["min", "max"]))
