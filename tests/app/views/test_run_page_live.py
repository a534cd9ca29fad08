"""The live Run page: its charts poll a live feed (``app.panels.live_feed``) that reads
incrementally (after the first read, only new points) and answers with what changed:
the rows added to each chart and the positions of those dropped, or all of them to a
tab that holds other rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app_fixtures import (
    RUN_SECTION,
    charts_of,
    first_paint,
    live_captions,
    live_payloads,
    log_scalars,
    running_run,
)

from app import data
from app.panels import live_feed, shared_charts, training_charts
from db import queries

FEED = "run.feed"  # app.views.run.FEED (importing a page module runs the page)

LOSS_IDS = ["loss:loss/total", "loss:loss/metric", "loss:loss/sec"]


def _loss_steps(app) -> list[int]:
    return _steps_of(app, "Loss terms: loss/total", "loss/total")


class _Tab:
    """What a watching tab's live chart element holds (``live_charts.js``): each
    chart's rows in the feed's order, and the number of the answer it drew last."""

    def __init__(self, app) -> None:
        (payload,) = live_payloads(app)
        self.app = app
        self.seq = payload["seq"]
        self.rows = {c["id"]: _records(json.loads(c["rows"])) for c in payload["charts"]}

    def poll(self, after: int, shown: frozenset[str] | None = None) -> dict:
        """What the element gets when it polls its feed with the charts ``shown`` in
        view (None: all), applied to what it holds."""
        body = live_feed.answer(self.app.session_state[FEED], after, self.seq, shown)
        assert body is not None, "the page's feed is gone"
        answer = json.loads(body)
        assert answer["applies_to"] == self.seq
        self.seq = answer["seq"]
        for chart in answer.get("charts", []):
            if "rows" in chart:
                self.rows[chart["id"]] = _records(chart["rows"])
            elif "add" in chart:
                gone = set(chart["drop"])
                kept = [r for i, r in enumerate(self.rows[chart["id"]]) if i not in gone]
                self.rows[chart["id"]] = kept + _records(chart["add"])
        return answer

    def steps(self, chart_id: str, name: str) -> list[int]:
        """The steps of series ``name`` in the rows chart ``chart_id`` holds."""
        return sorted(r["step"] for r in self.rows[chart_id] if r["name"] == name)


def _records(columns: dict[str, list]) -> list[dict]:
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def _poll(app, after: int) -> dict:
    """What a tab that holds none of the page's rows gets when it polls its feed."""
    body = live_feed.answer(app.session_state[FEED], after)
    assert body is not None, "the page's feed is gone"
    return json.loads(body)


def _answer_steps(answer: dict, chart_id: str, name: str) -> list[int] | None:
    """The steps of series ``name`` in the rows an answer carries whole for chart
    ``chart_id`` (None: the answer says the chart is unchanged)."""
    (chart,) = [c for c in answer["charts"] if c["id"] == chart_id]
    if "rows" not in chart:
        return None
    rows = chart["rows"]
    return sorted(s for s, n in zip(rows["step"], rows["name"], strict=True) if n == name)


def _spy_builds(monkeypatch) -> list[str]:
    """The ids of the chart groups built from now on, in order."""
    built: list[str] = []
    original = training_charts.group_chart

    def spy(group, *args, **kwargs):
        built.append(group.id)
        return original(group, *args, **kwargs)

    monkeypatch.setattr(training_charts, "group_chart", spy)
    return built


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


def test_a_poll_fetches_only_the_points_added_since_the_last(store, monkeypatch):
    run_id = running_run(store, "live run", range(1, 21), total=100)
    calls = _spy_reads(monkeypatch, lambda args, kwargs: kwargs.get("since_step"))
    app = first_paint("views/run.py", {"run_id": run_id})
    assert not app.exception and not app.error
    assert _loss_steps(app) == list(range(1, 21))
    assert calls and all(c is None for c in calls)  # the first read: the whole series
    tab = _Tab(app)
    calls.clear()
    answer = tab.poll(20)  # nothing new since step 20: no charts, the state only
    assert calls == [20] and "charts" not in answer
    assert answer["active"] and answer["last_step"] == 20
    calls.clear()
    log_scalars(store, run_id, range(21, 26), total=100)
    answer = tab.poll(20)
    assert calls == [20]  # only what came after step 20
    assert tab.steps("loss:loss/total", "loss/total") == list(range(1, 26))
    assert answer["caption"] == "25 points logged per metric, up to step 25"
    assert [c["id"] for c in answer["charts"]] == [*LOSS_IDS, "norm_band", "norm_var", "cosines"]
    assert all("spec" not in c for c in answer["charts"])  # the specs did not change
    calls.clear()
    assert "charts" not in tab.poll(25) and calls == [25]  # a read of nothing


def test_a_poll_sends_only_the_rows_the_tab_lacks(store):
    """Watching must be cheap: a tab that holds steps 1-20 gets steps 21-25 alone, not
    every row of every chart again; a tab that drew something else (an answer lost)
    gets them all."""
    run_id = running_run(store, "live run", range(1, 21), total=100)
    app = first_paint("views/run.py", {"run_id": run_id})
    tab = _Tab(app)
    log_scalars(store, run_id, range(21, 26), total=100)
    answer = tab.poll(20)
    for chart in answer["charts"]:
        assert "rows" not in chart and chart["drop"] == [], chart  # nothing redrawn
        assert sorted(set(chart["add"]["step"])) == list(range(21, 26)), chart
    assert tab.steps("loss:loss/total", "loss/total") == list(range(1, 26))
    assert tab.steps("cosines", "cos/gap") == list(range(1, 26))
    log_scalars(store, run_id, range(26, 31), total=100)
    lost = tab.seq
    tab.poll(25)  # an answer the tab never drew
    tab.seq = lost
    answer = tab.poll(25)
    assert answer["applies_to"] == lost and all("rows" in c for c in answer["charts"])
    assert _answer_steps(answer, "loss:loss/total", "loss/total") == list(range(1, 31))


def test_a_poll_builds_only_the_charts_in_view(store, monkeypatch):
    """Building charts is most of a poll's server time: a tab with two charts in view
    gets those two built anew; one that comes into view is built at the next poll,
    new step or not, with every row logged since it was last sent."""
    shared_charts.clear()
    run_id = running_run(store, "long page", range(1, 21), total=100)
    app = first_paint("views/run.py", {"run_id": run_id})
    tab = _Tab(app)
    built = _spy_builds(monkeypatch)
    in_view = frozenset(LOSS_IDS[:2])
    log_scalars(store, run_id, range(21, 26), total=100)
    answer = tab.poll(20, in_view)
    assert sorted(built) == sorted(in_view)
    assert [c["id"] for c in answer["charts"]] == [*LOSS_IDS, "norm_band", "norm_var", "cosines"]
    assert tab.steps(LOSS_IDS[0], "loss/total") == list(range(1, 26))
    assert tab.steps("cosines", "cos/gap") == list(range(1, 21))  # off screen: as it was
    built.clear()
    assert "charts" not in tab.poll(25, in_view) and built == []  # nothing new to build
    answer = tab.poll(25, in_view | {"cosines"})  # scrolled to: built, no new step needed
    assert built == ["cosines"]
    assert tab.steps("cosines", "cos/gap") == list(range(1, 26))


def test_a_page_rerun_keeps_its_feed_and_a_changed_choice_opens_another(store):
    run_id = running_run(store, "live run", range(1, 11), total=100)
    app = first_paint("views/run.py", {"run_id": run_id})
    app.run()  # the follow-up: the whole page
    token = app.session_state[FEED]
    log_scalars(store, run_id, range(11, 16), total=100)
    app.run()  # a widget changed elsewhere: the same charts, the same feed, all sent
    assert app.session_state[FEED] == token and _loss_steps(app) == list(range(1, 16))
    assert "charts" not in _Tab(app).poll(15)  # the page sent them all: nothing is new
    app.radio(key="run.x").set_value("time").run()
    assert app.session_state[FEED] != token  # another x axis: another feed


def test_two_tabs_share_the_charts_built_for_a_step(store, monkeypatch):
    """Two tabs watching the same live run with the same choices: the charts for a
    step are built once (app.panels.shared_charts) and both tabs get the same rows."""
    shared_charts.clear()
    run_id = running_run(store, "watched twice", range(1, 21), total=100)
    built = _spy_builds(monkeypatch)
    first, second = (first_paint("views/run.py", {"run_id": run_id}) for _ in range(2))
    assert first.session_state[FEED] != second.session_state[FEED]  # a feed per tab
    assert _loss_steps(first) == _loss_steps(second) == list(range(1, 21))
    log_scalars(store, run_id, range(21, 26), total=100)
    once = len(built)
    answers = [_poll(first, 20)]
    assert len(built) > once  # the first tab to see step 25 builds the charts
    rebuilt = len(built)
    answers.append(_poll(second, 20))
    assert len(built) == rebuilt  # the second gets them
    assert [_answer_steps(a, "loss:loss/total", "loss/total") for a in answers] == [
        list(range(1, 26))
    ] * 2


def test_a_long_run_sends_its_new_points_in_buckets_of_the_held_grid(store, monkeypatch):
    """A run logging hundreds of steps a second: a poll reads the new points grouped in
    buckets about as wide as the held grid, a few rows per series, not every value."""
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
    log_scalars(store, run_id, range(3001, 3601), flush_interval=3600)
    tails.clear()
    answer = _poll(app, 3000)
    (bucket, tail), *_ = tails
    assert bucket == 3000 // 75  # the held grid: 75 points per series
    loss = tail[tail["name"] == "loss/total"]
    assert len(loss) == 600 // bucket + 1 and loss["step"].max() == 3600  # 3001-3039 … 3600
    assert tail.attrs["total_points"][(run_id, "loss/total")] == 600
    assert max(_answer_steps(answer, "loss:loss/total", "loss/total")) == 3600
    assert answer["caption"] == "3,600 points logged per metric, up to step 3,600"


def test_the_points_notes_of_the_charts_share_one_caption(store):
    """A live page whose charts draw fewer points than were logged says so in one
    note under the charts, not one caption per chart."""
    run_id = running_run(store, "long run", range(1, 1001), flush_interval=3600)
    app = first_paint("views/run.py", {"run_id": run_id})
    assert not app.exception and not app.error
    notes = [text for text in live_captions(app) if text.startswith("Points drawn")]
    assert len(notes) == 1, notes
    assert notes[0].startswith("Points drawn of those logged: Loss terms: loss/total ")
    assert " of 1,000 points · " in notes[0]  # a loss term's own chart


def test_a_poll_reads_and_builds_only_the_open_tab(store, monkeypatch):
    """Watching must be cheap: a poll builds the open tab's charts only, and
    reads only their series; another tab is read and drawn once opened."""
    run_id = running_run(store, "live run", range(1, 11), total=100)
    read = _spy_reads(monkeypatch, lambda args, kwargs: set(args[2]))
    app = first_paint("views/run.py", {"run_id": run_id})
    app.run()  # the follow-up: the whole page
    log_scalars(store, run_id, range(11, 16), total=100)
    read.clear()
    answer = _poll(app, 10)
    assert [c["id"] for c in answer["charts"]] == [*LOSS_IDS, "norm_band", "norm_var", "cosines"]
    assert read and all("lr" not in names and "time/step" not in names for names in read)
    app.session_state[RUN_SECTION] = "Optimisation and speed"
    app.run()
    assert not app.exception and not app.error
    titles = [_title(s) for s in charts_of(app)]
    assert "Learning rate" in titles and "Loss terms: loss/total" not in titles
    assert _steps_of(app, "Learning rate", "lr") == list(range(1, 16))


def test_a_poll_says_when_the_run_ended_and_a_forgotten_feed_is_gone(store, monkeypatch):
    run_id = running_run(store, "live run", range(1, 6), total=100)
    app = first_paint("views/run.py", {"run_id": run_id})
    store.set_status(run_id, "finished")
    data.run.clear()  # its cached record (seconds old at most)
    answer = _poll(app, 5)
    assert answer["active"] is False  # the element then reruns the page, drawn finished
    assert live_feed.answer("no-such-token", 5) is None
    monkeypatch.setattr(live_feed, "IDLE_S", 0.0)  # not polled for longer than IDLE_S
    assert live_feed.answer(app.session_state[FEED], 5) is None


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


def _title(spec: dict) -> str:
    text = spec.get("title", {}).get("text")
    return " ".join(text) if isinstance(text, list) else text  # long titles wrap


def _steps_of(app, title: str, name: str) -> list[int]:
    spec = next(s for s in charts_of(app) if _title(s) == title)
    rows = next(iter(spec["datasets"].values()))
    return sorted(r["step"] for r in rows if r.get("name", name) == name)


def test_a_closed_log_sets_no_timer_on_a_live_page(store, monkeypatch):
    """A watching tab reruns only what it shows: the header's fragment every 10 s and,
    while its expander is open, the log's; a closed log's timer made the browser
    re-render the page every 5 s for nothing."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    timers: list[float] = []
    enqueue = ScriptRunContext.enqueue

    def spy(self, msg):
        if msg.WhichOneof("type") == "auto_rerun":
            timers.append(msg.auto_rerun.interval)
        return enqueue(self, msg)

    monkeypatch.setattr(ScriptRunContext, "enqueue", spy)
    run_id = running_run(store, "live run", range(1, 6), total=100)
    app = first_paint("views/run.py", {"run_id": run_id})
    app.run()  # the follow-up: the whole page, the log expander closed
    timers.clear()
    app.run()
    assert not app.exception and not app.error
    assert timers == [10.0]  # the header only (HEADER_S)
    app.session_state["run.log_open"] = True
    timers.clear()
    app.run()
    assert timers == [10.0, 5.0]  # and the open log (LOG_REFRESH_S)
