"""app/views/run.py under AppTest: live diagnostics of one run."""

from __future__ import annotations

import pytest
from app_fixtures import (
    all_run_charts,
    charts_of,
    first_paint,
    held_out_variance,
    live_captions,
    open_page,
    texts,
)

#: The loss terms the fixture logs, each its own small chart with its own y scale.
LOSS_TERMS = ["Loss terms: loss/total", "Loss terms: loss/metric", "Loss terms: loss/sec"]


def _title(spec: dict) -> str | None:
    text = spec.get("title", {}).get("text")
    return " ".join(text) if isinstance(text, list) else text  # long titles wrap


def _titles(app) -> list[str]:
    return [_title(spec) for spec in all_run_charts(app)]


def test_empty_store_explains_and_links_to_launch(home):
    app = open_page("views/run.py")
    assert not app.exception
    assert any("No runs yet" in t for t in texts(app.info))
    assert app.get("page_link")[0].proto.page.endswith("launch")


def test_finished_run_shows_every_diagnostic(filled):
    app = open_page("views/run.py", {"run_id": filled.sec})
    assert not app.exception and not app.error
    assert app.selectbox(key="run.select").value == filled.sec
    assert [tab.label for tab in app.tabs][:4] == [
        "Overview",
        "Norms",
        "Gradients and directions",
        "Optimisation and speed",
    ]
    # Opened: the overview only (the other tabs are read and drawn when opened).
    assert [_title(spec) for spec in charts_of(app)] == [
        *LOSS_TERMS,
        "Embedding norm (training batch): mean, ± std, min–max",
        "Norm variance (training batch)",
        "Positive / negative cosine",
        "Evaluation on the test split",
    ]
    assert _titles(app) == [
        *LOSS_TERMS,
        "Embedding norm (training batch): mean, ± std, min–max",
        "Norm variance (training batch)",
        "Positive / negative cosine",
        "Evaluation on the test split",
        "Coefficient of variation (std / mean, training batch)",
        "Norm percentiles p05 / p50 / p95 (training batch)",
        "Tracked-sample norm trajectories",
        "SEC target μ against the mean norm",
        "Gradient magnitude vs 1/‖f‖ (correlation) and radial cosine",
        "Mean gradient norm ‖∂L/∂f‖",
        "Rotation balance: small-norm / large-norm half (1 = balanced)",
        "Mean turn of the tracked samples since their previous pass (degrees)",
        "Learning rate",
        "Seconds per step",
        "Training samples per second",
    ]
    assert "finished" in app.markdown[0].value  # the tiles, status first
    assert "60 points logged per metric, up to step 60" in live_captions(app)
    variance = all_run_charts(app)[len(LOSS_TERMS) + 1]
    assert variance["encoding"]["y"]["scale"]["type"] == "log"
    rows = next(iter(variance["datasets"].values()))
    assert len(rows) == 60 and {r["value"] for r in rows} == {0.1}


def test_a_fresh_page_draws_its_charts_then_the_rest(filled):
    """Opened afresh, the page's first script run sends the widgets, the header and the
    open tab's charts (one element) only: the browser paints them before it loads the
    code of the panels below; the follow-up run sends the whole page, ending its timer."""
    from app.ui import FOLLOW_UP_KEY

    app = first_paint("views/run.py", {"run_id": filled.sec})
    assert not app.exception and not app.error
    assert [_title(spec) for spec in charts_of(app)][:2] == LOSS_TERMS[:2]
    # the overview: three loss terms, three training charts, the evaluation
    assert len(charts_of(app)) == 7
    assert not app.code and [box.label for box in app.expander] == ["Notes"]  # the rest follows
    assert FOLLOW_UP_KEY in app.session_state  # armed: the timer's rerun follows
    app.run()
    # the whole page: the open tab's seven charts (the overview) and the panels below
    assert len(charts_of(app)) == 7 and app.code and len(app.expander) == 6  # + Notes, exports
    assert FOLLOW_UP_KEY not in app.session_state  # no further follow-up
    app.run()
    assert len(charts_of(app)) == 7  # later runs draw the whole page
    assert len(_titles(app)) == 18  # every tab, each drawn when opened


def test_the_formerly_hidden_statistics_are_charted(filled):
    app = open_page("views/run.py", {"run_id": filled.sec})
    drawn = set()
    for spec in all_run_charts(app):
        for rows in spec["datasets"].values():
            drawn.update(r["name"] for r in rows if "name" in r)
    hidden = {
        "grad/rotation_ratio", "grad/norm_mean", "direction/angle_mean", "norm/p05",
        "norm/p50", "norm/p95", "time/step", "time/samples_per_s",
    }  # fmt: skip
    assert hidden <= drawn


def test_training_batch_and_held_out_variances_are_labelled_apart(filled):
    app = open_page("views/run.py", {"run_id": filled.sec})
    app.multiselect(key="run.evals").set_value(["norm/var"]).run()
    assert not app.exception and not app.error
    options = app.multiselect(key="run.evals").options
    assert "norm variance (test set)" in options
    specs = {_title(spec): spec for spec in all_run_charts(app)}
    train = next(iter(specs["Norm variance (training batch)"]["datasets"].values()))
    test = next(iter(specs["Evaluation on the test split"]["datasets"].values()))
    assert {r["value"] for r in train} == {0.1}
    assert [r["value"] for r in test] == pytest.approx([held_out_variance(0.1)] * 2)


def test_linear_scale_and_relative_time(filled):
    app = open_page("views/run.py", {"run_id": filled.sec})
    app.toggle(key="run.log").set_value(False)
    app.radio(key="run.x").set_value("time").run()
    assert not app.exception and not app.error
    variance = all_run_charts(app)[len(LOSS_TERMS) + 1]
    assert variance["encoding"]["y"]["scale"].get("type") != "log"
    assert variance["encoding"]["x"]["field"] == "time"


def test_failed_run_shows_its_error(filled):
    app = open_page("views/run.py", {"run_id": filled.failed})
    assert not app.exception
    assert any("loss became NaN" in e for e in texts(app.error))
    assert any("failed before it logged any metric" in t for t in texts(app.info))


def test_unknown_run_id_is_a_readable_warning(filled):
    app = open_page("views/run.py", {"run_id": "nope"})
    assert not app.exception
    assert any("No run with id `nope`" in w for w in texts(app.warning))


def test_page_errors_are_messages_not_tracebacks(filled, monkeypatch):
    from app import data

    def broken(*args, **kwargs):
        raise RuntimeError("database exploded")

    monkeypatch.setattr(data, "metric_names", broken)
    app = open_page("views/run.py", {"run_id": filled.sec})
    assert not app.exception
    assert any("RuntimeError: database exploded" in e for e in texts(app.error))


def test_evaluation_picker_is_usable_before_the_first_evaluation(filled):
    """Opened before any evaluation, the picker had no options, so it was
    disabled, and it is drawn once, outside the live fragment: disabled for good."""
    app = open_page("views/run.py", {"run_id": filled.failed})
    assert not app.exception
    picker = app.multiselect(key="run.evals")
    assert not picker.disabled
    assert {"recall@1", "nmi", "map@r"} <= set(picker.options) | {
        o.split(" ")[0].lower() for o in picker.options
    }


def test_relative_time_reaches_tracked_samples_and_evaluations(filled):
    """The "relative time" axis left the tracked-sample and evaluation charts on steps."""
    app = open_page("views/run.py", {"run_id": filled.sec})
    app.radio(key="run.x").set_value("time").run()
    assert not app.exception and not app.error
    specs = {_title(spec): spec for spec in all_run_charts(app)}
    for title in ("Tracked-sample norm trajectories", "Evaluation on the test split"):
        spec = specs[title]
        assert spec["encoding"]["x"]["field"] == "time", title
        rows = next(iter(spec["datasets"].values()))
        assert rows and all(r["time"] == r["time"] for r in rows), title  # no NaN


def test_smoothing_on_the_run_page(filled):
    app = open_page("views/run.py", {"run_id": filled.sec})
    loss = lambda: next(  # noqa: E731
        iter(
            {_title(s): s for s in all_run_charts(app)}["Loss terms: loss/total"][
                "datasets"
            ].values()
        )
    )
    raw = [r["value"] for r in loss() if r["name"] == "loss/total"]
    app.slider(key="run.smoothing").set_value(0.9).run()
    assert not app.exception and not app.error
    smoothed = [r["value"] for r in loss() if r["name"] == "loss/total"]
    assert len(smoothed) == len(raw) and smoothed[-1] > raw[-1] * 1.2  # the EMA lags 1/(1+t)


def test_run_log_tail_and_checkpoints_with_download(filled_fresh, store):
    from db import run_log

    run_dir = store.run_dir(filled_fresh.sec)
    (run_dir / run_log.LOG_FILE).write_text("".join(f"step {i}\n" for i in range(500)))
    checkpoint = store.checkpoint_dir(filled_fresh.sec) / "step-60.pt"
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    checkpoint.write_bytes(b"weights")
    with store.tracker(filled_fresh.sec, flush_interval=0) as tracker:
        tracker.track_checkpoint(str(checkpoint), 60)
    app = open_page("views/run.py", {"run_id": filled_fresh.sec})
    assert not app.exception and not app.error
    assert not [c for c in app.code if "step 499" in c.value]  # read only when opened
    app.session_state["run.log_open"] = True
    app.run()
    (log,) = [c for c in app.code if "step 499" in c.value]
    assert log.value.splitlines()[0] == "step 300"  # the last 200 lines
    buttons = [b for b in app.get("download_button") if b.proto.label == "Download"]
    assert len(buttons) == 1
    assert any("step-60.pt" in m.value for m in app.markdown)


def test_wall_clock_x_axis_reaches_every_chart(filled):
    """A wall-clock x axis (local time on a temporal axis) besides step and
    relative time, for the training charts, tracked samples and evaluations."""
    import os

    from db.store import RunStore

    record = RunStore(os.environ["SPHERESCOPE_HOME"]).get_run(filled.sec)
    app = open_page("views/run.py", {"run_id": filled.sec})
    assert app.radio(key="run.x").options == ["step", "relative time", "wall clock"]
    app.radio(key="run.x").set_value("clock").run()
    assert not app.exception and not app.error
    specs = {_title(spec): spec for spec in all_run_charts(app)}
    started_ms = record.started_at.timestamp() * 1000
    for title in (
        "Norm variance (training batch)",
        "Tracked-sample norm trajectories",
        "Evaluation on the test split",
    ):
        x = specs[title]["encoding"]["x"]
        assert (x["field"], x["type"]) == ("clock", "temporal"), title
        rows = next(iter(specs[title]["datasets"].values()))
        clocks = [r["clock"] for r in rows]
        assert clocks and all(started_ms - 60_000 < c < started_ms + 3_600_000 for c in clocks)


def test_a_live_refresh_without_a_new_step_sends_the_same_charts(store):
    """A tab keeps the charts it drew until the run logs a new step: the spec and the
    rows it sends again are byte-identical (the browser then redraws nothing)."""
    from app_fixtures import log_scalars, running_run

    run_id = running_run(store, "live run", range(1, 11))
    app = open_page("views/run.py", {"run_id": run_id})
    assert not app.exception and not app.error
    first = [(c.proto.spec, c.proto.datasets[0].data.data) for c in app.get("vega_lite_chart")]
    app.run()
    again = [(c.proto.spec, c.proto.datasets[0].data.data) for c in app.get("vega_lite_chart")]
    assert again == first
    log_scalars(store, run_id, range(11, 12))
    app.run()
    newer = [(c.proto.spec, c.proto.datasets[0].data.data) for c in app.get("vega_lite_chart")]
    assert [spec for spec, _ in newer] == [spec for spec, _ in first]  # only rows change
    assert all(rows != old for (_, rows), (_, old) in zip(newer, first, strict=True))


def test_run_page_charts_are_canvases_without_per_mark_aria_descriptions(filled):
    """The Run page's charts draw on a canvas, which has no element per mark: Vega-Lite's
    per-row ARIA descriptions (formatted on every refresh) are switched off."""
    app = open_page("views/run.py", {"run_id": filled.sec})
    for spec in all_run_charts(app):
        assert spec["usermeta"]["embedOptions"]["renderer"] == "canvas"
        assert spec["config"]["aria"] is False


def _tooltips(spec: dict) -> list:
    parts = [spec, *spec.get("layer", [])]
    return [
        (part.get("encoding", {}).get("tooltip"), (part.get("mark") or {}).get("tooltip"))
        for part in parts
        if isinstance(part.get("mark"), dict) or "tooltip" in part.get("encoding", {})
    ]


def test_hover_shows_the_row_but_a_wall_clock_keeps_its_formatted_date(filled):
    """On step and relative-time axes a hovered mark shows its row's fields (no
    formatted tooltip object per row and refresh); a wall-clock x is epoch milliseconds
    in the row, so there the encoded tooltip, with its formatted date, stays."""
    app = open_page("views/run.py", {"run_id": filled.sec})
    variance = {_title(spec): spec for spec in all_run_charts(app)}[
        "Norm variance (training batch)"
    ]
    assert (None, {"content": "data"}) in _tooltips(variance)
    app.radio(key="run.x").set_value("clock").run()
    variance = {_title(spec): spec for spec in all_run_charts(app)}[
        "Norm variance (training batch)"
    ]
    encoded = [encoding for encoding, _ in _tooltips(variance) if encoding]
    assert encoded and any(
        item.get("field") == "clock" and item.get("type") == "temporal"
        for tooltip in encoded
        for item in (tooltip if isinstance(tooltip, list) else [tooltip])
    )
