"""The live Run page reads incrementally: after the first read, only new points."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app_fixtures import RUN_SECTION, charts_of, first_paint, log_scalars, running_run

from db import queries


def _loss_steps(app) -> list[int]:
    spec = next(s for s in charts_of(app) if s.get("title", {}).get("text") == "Loss terms")
    rows = next(iter(spec["datasets"].values()))
    return sorted(r["step"] for r in rows if r["name"] == "loss/total")


def _spy_reads(monkeypatch, note: Callable[[tuple, dict], Any]) -> list:
    """What ``note`` makes of each ``queries.metric_series(*args, **kwargs)`` call the
    page makes from now on, in order."""
    notes: list = []
    original = queries.metric_series

    def spy(*args: Any, **kwargs: Any) -> Any:
        notes.append(note(args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(queries, "metric_series", spy)
    return notes


def test_a_refresh_fetches_only_the_points_added_since_the_last(store, monkeypatch):
    run_id = running_run(store, "live run", range(1, 21), total=100)
    calls = _spy_reads(monkeypatch, lambda args, kwargs: kwargs.get("since_step"))
    app = first_paint("views/run.py", {"run_id": run_id})
    assert not app.exception and not app.error
    assert _loss_steps(app) == list(range(1, 21))
    assert calls and all(c is None for c in calls)  # the first read: the whole series
    calls.clear()
    app.run()  # the page's follow-up (ui.follow_up): nothing new since step 20
    assert calls == [20] and _loss_steps(app) == list(range(1, 21))
    calls.clear()
    log_scalars(store, run_id, range(21, 26), total=100)
    app.run()
    assert not app.exception and not app.error
    assert _loss_steps(app) == list(range(1, 26))
    assert 20 in calls and None not in calls  # only what came after step 20
    calls.clear()
    app.run()  # nothing new: a read of nothing, same chart
    assert calls == [25] and _loss_steps(app) == list(range(1, 26))


def test_a_second_tab_draws_the_charts_the_first_built(store, monkeypatch):
    """Two tabs watching the same live run with the same options: the charts are built
    once per new step (app.panels.shared_charts) and both tabs draw the same rows."""
    from app.panels import shared_charts, training_charts

    shared_charts.clear()
    run_id = running_run(store, "watched twice", range(1, 21), total=100)
    built = []
    original = training_charts.group_chart

    def spy(group, *args, **kwargs):
        built.append(group.id)
        return original(group, *args, **kwargs)

    monkeypatch.setattr(training_charts, "group_chart", spy)
    first, second = (first_paint("views/run.py", {"run_id": run_id}) for _ in range(2))
    for app in (first, second):
        app.run()  # each tab's follow-up: the whole page
        assert not app.exception and not app.error
    assert _loss_steps(first) == _loss_steps(second) == list(range(1, 21))
    once = len(built)
    log_scalars(store, run_id, range(21, 26), total=100)
    first.run()
    assert len(built) > once  # the first tab to see step 25 builds the charts
    rebuilt = len(built)
    second.run()
    assert len(built) == rebuilt  # the second draws them
    assert _loss_steps(first) == _loss_steps(second) == list(range(1, 26))
    third = first_paint("views/run.py", {"run_id": run_id})  # opened afresh: first row only
    assert not third.exception and len(charts_of(third)) == 2


def test_a_long_run_sends_its_new_points_in_buckets_of_the_held_grid(store, monkeypatch):
    """A run logging hundreds of steps a second: a refresh reads the new points grouped
    in buckets about as wide as the held grid, a few rows per series, not every value."""
    run_id = running_run(store, "fast run", range(1, 3001), flush_interval=3600)  # one chunk
    tails = []
    original = queries.metric_series

    def spy(*args, **kwargs):
        frame = original(*args, **kwargs)
        if kwargs.get("since_step") is not None:
            tails.append((kwargs.get("since_bucket", 1), frame))
        return frame

    monkeypatch.setattr(queries, "metric_series", spy)
    app = first_paint("views/run.py", {"run_id": run_id})
    app.run()
    log_scalars(store, run_id, range(3001, 3601), flush_interval=3600)
    tails.clear()
    app.run()
    assert not app.exception and not app.error
    (bucket, tail), *_ = tails
    assert bucket == 3000 // 75  # the held grid: 75 points per series
    loss = tail[tail["name"] == "loss/total"]
    assert len(loss) == 600 // bucket + 1 and loss["step"].max() == 3600  # 3001-3039 … 3600
    assert tail.attrs["total_points"][(run_id, "loss/total")] == 600
    assert max(_loss_steps(app)) == 3600
    assert "3,600 points logged per metric, up to step 3,600" in [c.value for c in app.caption]


def test_the_points_notes_of_the_charts_share_one_caption(store):
    """A live page whose charts draw fewer points than were logged says so in one
    caption under the charts, not one caption per chart (each an element that every
    refresh sent again and the browser rendered again)."""
    run_id = running_run(store, "long run", range(1, 1001), flush_interval=3600)
    app = first_paint("views/run.py", {"run_id": run_id})
    app.run()
    assert not app.exception and not app.error
    notes = [c.value for c in app.caption if " points" in c.value and "logged per" not in c.value]
    assert len(notes) == 1, notes
    assert notes[0].startswith("Points drawn of those logged: Loss terms ")
    assert " of 3,000 points · " in notes[0]  # the loss chart's three terms


def test_a_live_page_marks_its_run_watched_and_an_ended_one_does_not(store):
    """The run's tracker flushes more often while a live page watches it (the page's
    lag is mostly the wait for the next flush); a finished run is not marked."""
    live = running_run(store, "live run", range(1, 6), total=100)
    ended = running_run(store, "ended run", range(1, 6), total=100)
    store.set_status(ended, "finished")
    for run_id in (live, ended):
        app = first_paint("views/run.py", {"run_id": run_id})
        assert not app.exception and not app.error
    assert store.is_watched(live)
    assert not store.is_watched(ended)


def test_a_live_refresh_reads_and_draws_only_the_open_tab(store, monkeypatch):
    """Issue 14 (watching must be cheap): each chart costs a watching browser about the
    same per refresh whatever its rows, so a live refresh builds the open tab's charts
    only, and reads only their series; another tab is read and drawn once opened."""
    run_id = running_run(store, "live run", range(1, 11), total=100)
    read = _spy_reads(monkeypatch, lambda args, kwargs: set(args[2]))
    app = first_paint("views/run.py", {"run_id": run_id})
    app.run()  # the follow-up: the whole page
    log_scalars(store, run_id, range(11, 16), total=100)
    read.clear()
    app.run()  # a live refresh
    assert not app.exception and not app.error
    titles = [_title(s) for s in charts_of(app)]
    assert titles == [
        "Loss terms",
        "Embedding norm (training batch): mean, ± std, min–max",
        "Norm variance (training batch)",
        "Positive / negative cosine",
    ]
    assert read and all("lr" not in names and "time/step" not in names for names in read)
    app.session_state[RUN_SECTION] = "Optimisation and speed"
    app.run()
    assert not app.exception and not app.error
    titles = [_title(s) for s in charts_of(app)]
    assert "Learning rate" in titles and "Loss terms" not in titles
    assert _steps_of(app, "Learning rate", "lr") == list(range(1, 16))


def _title(spec: dict) -> str:
    text = spec.get("title", {}).get("text")
    return " ".join(text) if isinstance(text, list) else text  # long titles wrap


def _steps_of(app, title: str, name: str) -> list[int]:
    spec = next(s for s in charts_of(app) if _title(s) == title)
    rows = next(iter(spec["datasets"].values()))
    return sorted(r["step"] for r in rows if r.get("name", name) == name)
