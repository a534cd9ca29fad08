"""app/views/runs.py under AppTest: empty store, table, filters and actions."""

from __future__ import annotations

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
    # every number through the one number format; the main metric first beside the name
    assert table.loc[filled.sec, "train:norm/var"] == "0.100"
    assert table.loc[filled.sec, "main"] == "0.600"
    assert list(app.dataframe[0].value.columns[:5]) == [
        "name", "main", "train:loss/total", "train:norm/var", "status",
    ]  # fmt: skip
    labels = data.key_column_labels()
    assert labels["train:norm/var"] == "norm var (training batch)"
    assert labels["eval:recall@1"] == "R@1"
    assert any("1–4 of 4 runs" in c for c in texts(app.caption))  # never "run(s)"


def test_search_and_status_filters(filled):
    app = open_page("views/runs.py")
    app.text_input(key="runs.search").set_value("plain").run()
    assert app.dataframe[0].value["run_id"].tolist() == [filled.plain]
    app.text_input(key="runs.search").set_value('"SEC"').run()  # a config value
    found = set(app.dataframe[0].value["run_id"])
    assert filled.sec in found and filled.plain not in found
    app.text_input(key="runs.search").set_value("").run()
    app.multiselect(key="runs.status").set_value(["failed"]).run()
    assert app.dataframe[0].value["run_id"].tolist() == [filled.failed]
    app.multiselect(key="runs.status").set_value([]).run()
    app.selectbox(key="runs.kind").set_value("analysis").run()
    assert app.dataframe[0].value["run_id"].tolist() == [filled.analysis]


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


def test_config_columns_sort_by_metric_or_config_and_tags_edited_in_the_table(filled_fresh):
    """Config columns picked from the runs' keys (the differing ones offered first),
    the catalogue's sort by a final metric or a config key, tags saved from the table
    (of a store of its own: the session's shared one stays as filled)."""
    filled = filled_fresh
    from app.panels import runs_columns

    app = open_page("views/runs.py")
    picker = app.multiselect(key=runs_columns.CONFIG_COLUMNS)
    assert picker.options[:2] == ["regularizer.name", "regularizer.weight"]
    picker.set_value(["regularizer.name"]).run()
    table = app.dataframe[0].value.set_index("run_id")
    assert table.loc[filled.sec, "config: regularizer.name"] == "sec"
    app.selectbox(key=runs_columns.SORT).set_value("eval:recall@1").run()
    sorted_ids = app.dataframe[0].value["run_id"].tolist()
    assert sorted_ids.index(filled.plain) < sorted_ids.index(filled.sec)  # R@1 0.8, 0.6
    app.toggle(key=runs_columns.REVERSED).set_value(True).run()
    sorted_ids = app.dataframe[0].value["run_id"].tolist()
    assert sorted_ids.index(filled.sec) < sorted_ids.index(filled.plain)
    app.selectbox(key=runs_columns.SORT).set_value("config.regularizer.name").run()
    assert app.dataframe[0].value["config: regularizer.name"].tolist()[0] == "sec"  # Z–A
    shown = app.dataframe[0].value
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
    # icons (where another test's reads stored the runs' findings first) are inline SVGs,
    # never a broken image
    assert table.count("<img") == table.count('<img src="data:image/svg+xml;base64,')
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


def test_paging_groups_and_bulk_archive_tag(home):
    """Pages of the catalogue's answer with the total; groups by a config key with count
    and mean ± std, one picked as a filter; bulk tag and archive (archived runs leave
    the default view and come back with "Show archived")."""
    from db.catalogue.query import query_runs

    store = RunStore(home)
    ids = []
    for index in range(30):
        run_id = store.create_run(
            {"optimizer": {"lr": [0.1, 0.01][index % 2]}}, f"r{index:02d}", status="running"
        )
        store.set_status(run_id, "finished")
        store.update_run_info(run_id, {"final_metrics": {"eval:recall@1": 0.5 + index / 100}})
        ids.append(run_id)
    app = open_page("views/runs.py")
    assert not app.exception and not app.error, (app.exception, app.error)
    app.selectbox(key="runs.page_size").set_value(25).run()
    assert len(app.dataframe[0].value) == 25
    assert any("1–25 of 30 runs" in c for c in texts(app.caption))
    app.number_input(key="runs.page").set_value(2).run()
    assert app.dataframe[0].value["name"].tolist() == [f"r{i:02d}" for i in range(4, -1, -1)]

    app.selectbox(key="runs.group_by").set_value("config").run()
    app.selectbox(key="runs.group_key").set_value("optimizer.lr").run()
    assert not app.exception and not app.error, (app.exception, app.error)
    groups = app.dataframe[0].value.set_index("group")
    assert groups.loc["0.1", "runs"] == "15"  # even indices: R@1 0.50 … 0.78
    assert groups.loc["0.1", "main metric mean ± std"] == "0.640 ± 0.0894"
    app.selectbox(key="runs.group_pick").set_value("0.01").run()
    assert any("1–15 of 15 runs" in c for c in texts(app.caption))
    app.selectbox(key="runs.group_by").set_value("").run()

    app.number_input(key="runs.page").set_value(1).run()
    chosen = app.dataframe[0].value["run_id"].tolist()[:2]
    app.multiselect(key="runs.selected").set_value(chosen).run()
    app.text_input(key="runs.bulk_tag").set_value("keep").run()
    app.button(key="runs.tag_add").click().run()
    assert all("keep" in store.get_run(r).tags for r in chosen)
    app.multiselect(key="runs.selected").set_value(chosen).run()
    app.button(key="runs.archive").click().run()
    assert not app.exception
    archived = query_runs(store, archived=True).rows["run_id"]
    assert set(archived) == set(chosen)
    shown = set(app.dataframe[0].value["run_id"])
    assert not shown & set(chosen) and any("of 28 runs" in c for c in texts(app.caption))
    app.toggle(key="runs.archived").set_value(True).run()
    table = app.dataframe[0].value.set_index("run_id")
    assert table.loc[chosen, "archived"].tolist() == [True, True]
    app.text_input(key="runs.search").set_value("keep").run()  # archived: still searchable
    assert set(app.dataframe[0].value["run_id"]) == set(chosen)
