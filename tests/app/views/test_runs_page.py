"""app/views/runs.py under AppTest: empty store, table, filters and actions."""

from __future__ import annotations

import pytest
from app_fixtures import open_page, texts

from app import data
from db.store import RunStore


def test_empty_store_explains_and_links_to_launch(home):
    app = open_page("views/runs.py")
    assert not app.exception
    assert any("No runs yet" in t for t in texts(app.info))
    assert [link.proto.label for link in app.get("page_link")] == ["Launch a run"]
    assert app.get("page_link")[0].proto.page.endswith("launch")


def test_table_lists_runs_with_progress_and_metrics(filled):
    app = open_page("views/runs.py")
    assert not app.exception and not app.error
    table = app.dataframe[0].value.set_index("run_id")
    assert set(table.index) == {filled.sec, filled.plain, filled.failed, filled.analysis}
    assert table.loc[filled.sec, "progress"] == 1.0
    assert table.loc[filled.sec, "status"] == "finished"
    assert table.loc[filled.failed, "status"] == "failed"
    assert table.loc[filled.sec, "open"] == f"run?run_id={filled.sec}"
    assert table.loc[filled.sec, "train:norm/var"] == pytest.approx(0.1)
    assert table.loc[filled.sec, "eval:recall@1"] == pytest.approx(0.6)
    labels = data.key_column_labels()
    assert labels["train:norm/var"] == "norm var (training batch)"
    assert labels["eval:recall@1"] == "R@1"
    assert "4 runs" in texts(app.caption)  # counts are pluralised, never "run(s)"


def test_search_and_status_filters(filled):
    app = open_page("views/runs.py")
    app.text_input(key="runs.search").set_value("plain").run()
    assert app.dataframe[0].value["run_id"].tolist() == [filled.plain]
    app.text_input(key="runs.search").set_value("").run()
    app.multiselect(key="runs.status").set_value(["failed"]).run()
    assert app.dataframe[0].value["run_id"].tolist() == [filled.failed]


def test_delete_asks_for_confirmation(filled_fresh, store: RunStore):
    runs = filled_fresh
    app = open_page("views/runs.py")
    app.multiselect(key="runs.selected").set_value([runs.failed]).run()
    app.button(key="runs.delete").click().run()
    assert any("trash" in t for t in texts(app.warning))
    assert store.exists(runs.failed)  # nothing deleted before the confirmation
    app.button(key="runs.delete.confirm").click().run()
    assert not app.exception
    assert not store.exists(runs.failed)
    assert len(list((store.home / "trash").iterdir())) == 1  # until `spherescope store gc`
    assert runs.failed not in set(app.dataframe[0].value["run_id"])


def test_tags_and_notes_are_saved(filled_fresh, store: RunStore):
    runs = filled_fresh
    app = open_page("views/runs.py")
    app.multiselect(key="runs.selected").set_value([runs.plain]).run()
    app.text_input[-1].set_value("baseline, seed0")
    app.text_area[0].set_value("the η = 0 row")
    app.button[-1].click().run()  # the form's submit button
    record = store.get_run(runs.plain)
    assert (record.tags, record.notes) == (["baseline", "seed0"], "the η = 0 row")
    assert [toast.value for toast in app.toast] == ["Saved"]  # shown after the rerun


def test_cancel_calls_the_worker(filled_fresh, monkeypatch):
    import worker

    cancelled = []
    monkeypatch.setattr(worker, "cancel", lambda run_id, store=None: cancelled.append(run_id))
    app = open_page("views/runs.py")
    app.multiselect(key="runs.selected").set_value([filled_fresh.sec]).run()
    app.button(key="runs.cancel").click().run()
    assert cancelled == [filled_fresh.sec]
    # the page reruns to show the new status: the toast must survive that rerun
    assert [toast.value for toast in app.toast] == ["Cancel requested for 1 run"]


def test_clone_fills_the_launch_form(filled):
    app = open_page("views/runs.py")
    app.multiselect(key="runs.selected").set_value([filled.plain]).run()
    app.button(key="runs.clone").click().run()
    assert not app.exception
    assert app.title[0].value == "Launch runs"
    draft = app.session_state["launch.draft"]
    assert draft["regularizer"]["name"] == "none"
    assert draft["objective"]["name"] == "simplex"
    assert app.selectbox(key="lf1.objective.name.head").value == "simplex"


def test_config_columns_metric_filter_and_tags_edited_in_the_table(filled):
    """Config columns picked from the runs' keys (the differing ones
    offered first), sort and filter by a final metric, tags saved from the table."""
    from app.panels import runs_columns

    app = open_page("views/runs.py")
    picker = app.multiselect(key=runs_columns.CONFIG_COLUMNS)
    assert picker.options[:2] == ["regularizer.name", "regularizer.weight"]
    picker.set_value(["regularizer.name"]).run()
    table = app.dataframe[0].value.set_index("run_id")
    assert table.loc[filled.sec, "config: regularizer.name"] == "sec"
    app.selectbox(key=runs_columns.METRIC).set_value("eval:recall@1").run()
    sorted_ids = app.dataframe[0].value["run_id"].tolist()
    assert sorted_ids.index(filled.plain) < sorted_ids.index(filled.sec)  # R@1 0.8, 0.6
    app.number_input(key=runs_columns.AT_LEAST).set_value(0.7).run()
    shown = app.dataframe[0].value
    assert filled.plain in set(shown["run_id"]) and filled.sec not in set(shown["run_id"])
    row = shown["run_id"].tolist().index(filled.plain)
    runs_columns.save_tag_edits(shown, {"edited_rows": {row: {"tags": "baseline, keep "}}})
    assert data.store().get_run(filled.plain).tags == ["baseline", "keep"]


def test_the_first_screenful_is_drawn_without_the_grid(filled):
    """A fresh Runs page paints its newest runs as a plain table (the
    grid component's code was most of its time to first content); the grid follows."""
    from app_fixtures import APP_MAIN
    from streamlit.testing.v1 import AppTest

    from app.panels.runs_preview import CSS_CLASS

    app = AppTest.from_file(str(APP_MAIN), default_timeout=60).run()  # Runs: the default
    assert not app.exception and not app.dataframe
    (table,) = [m.value for m in app.markdown if CSS_CLASS in m.value]
    assert f"run?run_id={filled.sec}" in table and "sec run" in table
    app.run()  # the follow-up
    assert len(app.dataframe) == 1 and not any(CSS_CLASS in m.value for m in app.markdown)


def test_the_sidebar_project_picker_filters_every_listing(home):
    store = RunStore(home)
    ours = store.create_run({}, "ours", project="lab-a", tags=["a-tag"])
    theirs = store.create_run({}, "theirs", project="lab-b", tags=["b-tag"])
    app = open_page("views/runs.py")
    assert set(app.dataframe[0].value["run_id"]) == {ours, theirs}
    picker = app.sidebar.selectbox(key="sidebar.project")
    assert picker.options == ["All projects", "lab-a", "lab-b"]
    picker.set_value("lab-a").run()
    assert app.dataframe[0].value["run_id"].tolist() == [ours]
    assert app.selectbox(key="runs.tag").options == ["", "a-tag"]
    app.switch_page("views/compare.py").run()  # the choice follows the user
    assert app.session_state[data.PROJECT_KEY] == "lab-a"
