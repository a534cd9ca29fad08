"""Records listed from the catalogue (``db.catalogue.lazy_record``) decode their JSON
and time fields on first read, and behave as records read from the run folders."""

from __future__ import annotations

import dataclasses
import pickle

from db.catalogue import snapshot
from db.catalogue.lazy_record import CataloguedRecord
from db.store import RunStore


def test_listed_records_equal_the_records_read_from_the_folders(
    store: RunStore, config: dict
) -> None:
    ended = store.create_run(config, "ended", tags=["b", "a"], sweep_id="s1")
    store.start_run(ended, host="node-1", device="cpu")
    store.update_run_info(ended, {"parameters": 12, "nested": {"x": [1, 2]}})
    store.set_notes(ended, "a note")
    store.end_run(ended, "failed", "it broke", exit_code=3)
    queued = store.create_run({"other": True}, "queued")
    snapshot.compact(store.files)
    listed = store.list_runs()
    assert [r.run_id for r in listed] == [queued, ended]
    lazy = listed[1]
    assert type(lazy) is CataloguedRecord
    assert lazy == store.get_run(ended) and store.get_run(ended) == lazy
    assert lazy.extra == {"exit_code": 3} and lazy.run_info["nested"] == {"x": [1, 2]}
    assert dataclasses.asdict(lazy) == dataclasses.asdict(store.get_run(ended))
    assert pickle.loads(pickle.dumps(lazy)) == lazy
    again = store.list_runs(status="failed")[0]
    again.config["changed"] = 1  # a record is a plain mutable value once read
    assert again.config["changed"] == 1 and again != store.get_run(ended)
    renamed = dataclasses.replace(again, name="renamed")
    assert renamed.name == "renamed" and renamed.config == again.config
    assert again.created_at == store.get_run(ended).created_at is not None
    assert lazy.finished_at is not None and lazy.heartbeat_at is None
