"""The Runs page's sort and grouping menus offer every config key of the project's runs
(the catalogue's), not only the keys of the rows on the current page."""

from __future__ import annotations

from app_fixtures import open_page

from db.catalogue.query import config_keys
from db.store import RunStore


def _run(store: RunStore, name: str, config: dict) -> str:
    run_id = store.create_run(config, name, status="running")
    store.end_run(run_id, "finished")
    return run_id


def test_config_keys_of_runs_off_the_page_can_be_sorted_and_grouped_by(store) -> None:
    _run(store, "old-momentum", {"optimizer": {"lr": 0.1, "momentum": 0.9}, "empty": {}})
    _run(store, "new-plain", {"optimizer": {"lr": 0.01}, "seeds": [1, 2]})
    # flattened as the config diff flattens: lists and empty tables are leaves
    assert config_keys(store) == ["optimizer.lr", "empty", "optimizer.momentum", "seeds"]

    app = open_page("views/runs.py")
    app.text_input(key="runs.search").input("new-plain").run()  # the page: one run
    assert not app.exception
    assert "config: optimizer.momentum" in app.selectbox(key="runs.sort").options
    assert "optimizer.momentum" in app.multiselect(key="runs.config_columns").options
    app.selectbox(key="runs.group_by").set_value("config").run()
    assert "optimizer.momentum" in app.selectbox(key="runs.group_key").options

    app.selectbox(key="runs.sort").set_value("config.optimizer.momentum").run()
    assert not app.exception
