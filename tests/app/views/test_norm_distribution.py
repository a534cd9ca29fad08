"""The norm distribution over steps (norm_hist/<bin>) on the Run and Compare pages."""

from __future__ import annotations

from app_fixtures import all_run_charts, charts_of, config, open_page

from sphere_engine.catalogue.norm_histogram import bin_edges, bin_key

TITLE = "Norm distribution over steps (training batch)"


def _record(store, name: str, first_bin: int) -> str:
    run_id = store.create_run(config(), name)
    store.set_status(run_id, "running", device="cpu")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in range(1, 11):
            values = {"loss/total": 1.0 / step, "norm/var": 0.1}
            values[bin_key(first_bin + step // 5)] = 0.75
            values[bin_key(first_bin + step // 5 + 1)] = 0.25
            tracker.track_many(values, step)
    store.set_status(run_id, "finished")
    return run_id


def _title(spec: dict) -> str:
    text = spec.get("title", {}).get("text")
    return " ".join(text) if isinstance(text, list) else text


def test_run_page_draws_the_histogram_as_a_heatmap(store):
    run_id = _record(store, "hist run", 48)
    app = open_page("views/run.py", {"run_id": run_id})
    assert not app.exception and not app.error
    (heatmap,) = [s for s in all_run_charts(app) if _title(s) == TITLE]
    rows = next(iter(heatmap["datasets"].values()))
    assert len(rows) == 20  # two non-empty bins per step
    assert heatmap["encoding"]["y"]["scale"]["type"] == "log"
    first = min(rows, key=lambda r: (r["x0"], r["lower"]))
    assert (first["lower"], first["upper"]) == bin_edges(48)
    assert first["fraction"] == 0.75 and first["x1"] == first["x0"] + 1
    compare = open_page("views/compare.py", {"runs": run_id})
    choices = compare.multiselect(key="compare.metrics").options
    assert not any("norm_hist" in c for c in choices)  # bins are not offered as lines


def test_compare_shows_runs_side_by_side_on_one_axis(store):
    low, high = _record(store, "small norms", 30), _record(store, "large norms", 70)
    app = open_page("views/compare.py", {"runs": f"{low},{high}"})
    assert not app.exception and not app.error
    heatmaps = [s for s in charts_of(app) if s.get("mark", {}).get("type") == "rect"]
    assert len(heatmaps) == 2
    scales = [h["encoding"]["y"]["scale"] for h in heatmaps]
    assert scales[0] == scales[1]
    assert scales[0]["domain"] == [bin_edges(30)[0], bin_edges(73)[1]]
    colours = [h["encoding"]["color"]["scale"]["domain"] for h in heatmaps]
    assert colours[0] == colours[1] == [0.0, 0.75]


def test_log_colour_scale_toggle_on_run_and_compare(store):
    """A log-scale toggle everywhere a variance is shown, the heatmap too."""
    low, high = _record(store, "small norms", 30), _record(store, "large norms", 70)
    app = open_page("views/run.py", {"run_id": low})
    (heatmap,) = [s for s in all_run_charts(app) if _title(s) == TITLE]
    assert heatmap["encoding"]["color"]["scale"].get("type") != "log"
    app.toggle(key="run.log_color").set_value(True).run()
    assert not app.exception and not app.error
    (heatmap,) = [s for s in all_run_charts(app) if _title(s) == TITLE]
    assert heatmap["encoding"]["color"]["scale"]["type"] == "log"
    compare = open_page("views/compare.py", {"runs": f"{low},{high}"})
    compare.toggle(key="compare.log_color").set_value(True).run()
    assert not compare.exception and not compare.error
    heatmaps = [s for s in charts_of(compare) if s.get("mark", {}).get("type") == "rect"]
    scales = [h["encoding"]["color"]["scale"] for h in heatmaps]
    assert len(scales) == 2 and scales[0] == scales[1]  # one colour scale for both runs
    assert scales[0]["type"] == "log" and scales[0]["domain"] == [0.25, 0.75]
