"""The run pickers' and the Runs menus' catalogue queries: ``pick_list`` (bounded,
results first, search in name / id / tags / notes, runs by id whatever their project or
archived state) and ``config_keys`` (every dotted key, the varying ones first)."""

from __future__ import annotations

from db.catalogue.manage import archive
from db.catalogue.query import config_keys, pick_list
from db.store import RunStore


def _run(store: RunStore, name: str, status: str = "finished", **fields) -> str:
    config = fields.pop("config", {"optimizer": {"lr": 0.1}})
    run_id = store.create_run(config, name, status="running", **fields)
    store.end_run(run_id, status)
    return run_id


def test_pick_list_is_bounded_newest_first_with_results_first(store) -> None:
    failed = _run(store, "broken", "failed")
    done = [_run(store, f"done-{i}") for i in range(4)]
    newest_failed = _run(store, "newer-broken", "failed")
    assert pick_list(store, limit=3)["run_id"].tolist() == [newest_failed, done[3], done[2]]
    first = pick_list(store, results_first=True, limit=None)["run_id"].tolist()
    assert first == [*reversed(done), newest_failed, failed]
    assert len(pick_list(store, limit=2)) == 2


def test_search_finds_names_ids_tags_and_notes_with_bound_parameters(store) -> None:
    tagged = _run(store, "plain", tags=["baseline"])
    noted = _run(store, "other")
    store.set_notes(noted, "O'Brien's rerun")
    quoted = _run(store, "it's 100% _odd_")
    assert pick_list(store, search="baseline")["run_id"].tolist() == [tagged]
    assert pick_list(store, search="o'brien")["run_id"].tolist() == [noted]
    assert pick_list(store, search=tagged[-8:])["run_id"].tolist() == [tagged]
    assert pick_list(store, search="100% _")["run_id"].tolist() == [quoted]
    assert pick_list(store, search="'; DROP TABLE runs; --").empty


def test_archived_runs_leave_the_list_but_stay_findable_and_linkable(store) -> None:
    kept = _run(store, "kept")
    shelved = _run(store, "shelved", project="other")
    archive(store, [shelved])
    assert pick_list(store)["run_id"].tolist() == [kept]
    assert pick_list(store, search="shelved", archived=None)["run_id"].tolist() == [shelved]
    by_id = pick_list(store, run_ids=[shelved, "missing"], archived=None, limit=None)
    assert by_id["run_id"].tolist() == [shelved]


def test_config_keys_are_every_flattened_key_the_varying_first(store) -> None:
    _run(store, "a", config={"optimizer": {"lr": 0.1, "name": "sgd"}, "head": {}})
    _run(store, "b", config={"optimizer": {"lr": 0.01, "name": "sgd"}, "ks": [1, 5]})
    _run(store, "c", config={"model": {"dim": 8}}, project="elsewhere")
    assert config_keys(store, "default") == ["optimizer.lr", "head", "ks", "optimizer.name"]
    assert "model.dim" in config_keys(store)
