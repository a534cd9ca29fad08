"""The run catalogue equals a full scan of the run folders: under concurrent writers
in several processes, after a writer is killed mid-update, after a rebuild; and a
listing of tens of thousands of runs opens no run folder."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from db.catalogue import journal, manage, snapshot
from db.catalogue.query import group_runs, projects, query_runs
from db.catalogue.rows import row_from_record, row_of
from db.records import RunRecord, to_datetime
from db.store import RunStore

WRITER = Path(__file__).with_name("catalogue_writer.py")
COMPARED = ("name", "kind", "status", "status_message", "project", "tags", "notes",
            "sweep_id", "archived", "config", "started_at", "finished_at", "host")  # fmt: skip


def scanned(store: RunStore) -> dict[str, dict[str, Any]]:
    """Every run's row read from its folder (what a rebuild reads)."""
    rows = {}
    for run_id in journal.folder_run_ids(store.files):
        row = row_of(store.files, run_id)
        if not row["deleted"]:
            rows[run_id] = {key: row[key] for key in COMPARED}
    return rows


def catalogued(store: RunStore) -> dict[str, dict[str, Any]]:
    return {
        row["run_id"]: {key: row[key] for key in COMPARED}
        for row in snapshot.read_table(store.files).to_pylist()
    }


def listed(store: RunStore) -> dict[str, str]:
    return {record.run_id: record.status for record in store.list_runs()}


def spawn(*args: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WRITER), *map(str, args)])


def test_concurrent_writers_in_several_processes_leave_it_equal_to_a_scan(
    store: RunStore,
) -> None:
    store.create_run({"before": True}, "before")  # a catalogue exists before they start
    snapshot.compact(store.files)
    writers = [spawn(store.home, seed, 12) for seed in range(4)]
    compactor = spawn(store.home, "compact", 6)
    seen_while_writing = 0
    while any(w.poll() is None for w in writers):
        seen_while_writing = max(seen_while_writing, len(store.list_runs()))
        time.sleep(0.05)
    assert [w.wait() for w in writers] == [0, 0, 0, 0]
    assert compactor.wait() == 0
    full = scanned(store)
    assert len(full) > 30 and seen_while_writing > 1
    assert catalogued(store) == full
    assert listed(store) == {run_id: row["status"] for run_id, row in full.items()}
    snapshot.compact(store.files)
    assert catalogued(store) == full
    assert journal.delta_files(store.files) == []
    assert not list(journal.paths_of(store.files).pending.iterdir())


def test_a_writer_killed_between_its_status_and_its_row_is_seen_and_repaired(
    store: RunStore, config: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = store.create_run(config, "doomed")
    snapshot.compact(store.files)
    assert spawn(store.home, "die", run_id).wait() == -9
    assert row_of(store.files, run_id)["status"] == "running"  # written before the kill
    # the marker it left makes every reader read the run from its folder
    assert store.list_runs(status="running")[0].run_id == run_id
    assert catalogued(store) == scanned(store)
    pending = journal.paths_of(store.files).pending
    assert len(list(pending.iterdir())) == 1
    monkeypatch.setattr(journal, "STALE_PENDING_S", 0.0)  # its writer is long dead
    assert listed(store) == {run_id: "running"}
    assert not list(pending.iterdir())  # repaired: the row it did not write is written
    snapshot.compact(store.files)
    assert catalogued(store) == scanned(store)


def test_rebuild_index_recovers_a_lost_or_damaged_catalogue(store: RunStore, config) -> None:
    ids = [store.create_run(config, f"run {i}") for i in range(5)]
    store.start_run(ids[0], host="h")
    store.end_run(ids[0], "finished")
    store.set_archived(ids[1])
    expected = scanned(store)
    root = journal.paths_of(store.files).root
    for path in root.rglob("*.json"):
        path.unlink()
    for path in root.glob("snapshot-*"):
        path.write_bytes(b"not parquet")
    assert manage.rebuild_index(store) == 5
    assert catalogued(store) == expected
    # lost altogether: the first reader rebuilds it
    import shutil

    shutil.rmtree(root)
    assert catalogued(store) == expected
    result = subprocess.run(
        [sys.executable, "-m", "worker.cli", "store", "rebuild-index"],
        env={"SPHERESCOPE_HOME": str(store.home), "PATH": "/usr/bin:/bin",
             "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "5 runs" in result.stdout
    assert catalogued(store) == expected


class OpenCounter:
    """Counts file-system accesses under a folder (Python's audit events)."""

    def __init__(self) -> None:
        self.root = ""
        self.hits: list[str] = []
        sys.addaudithook(self)

    def __call__(self, event: str, args: tuple) -> None:
        if not self.root or event not in ("open", "os.listdir", "os.scandir"):
            return
        path = str(args[0]) if args and args[0] is not None else ""
        if path.startswith(self.root):
            self.hits.append(f"{event} {path}")


COUNTER = OpenCounter()


def fill_catalogue(store: RunStore, count: int, running: int) -> list[str]:
    """``count`` catalogue rows (the last ``running`` of them running, with real folders)."""
    rows, live = [], []
    for index in range(count - running):
        record = RunRecord(
            run_id=f"20260101-000000-{index:08x}", name=f"bulk {index}", status="finished",
            created_at=to_datetime(1.7e9 + index), tags=["bulk", f"t{index % 7}"],
            config={"optimizer": {"lr": index % 3}}, sweep_id=f"s{index % 5}",
            run_info={"final_metrics": {"eval:recall@1": (index % 100) / 100}},
        )  # fmt: skip
        rows.append(row_from_record(record, project=f"p{index % 2}", disk_bytes=1000, read_ns=1))
    for index in range(running):
        run_id = store.create_run({"live": index}, f"live {index}")
        store.start_run(run_id, host="h")
        live.append(run_id)
    with journal.compaction_lock(store.files):
        table = snapshot.to_table(rows + [row_of(store.files, r) for r in live])
        snapshot._write(store.files, table, journal.delta_files(store.files))
    return live


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, list[str]]:
    store = RunStore(tmp_path_factory.mktemp("big"))
    return store, fill_catalogue(store, 50_000, 3)


def test_listing_50000_runs_opens_no_run_folder(big_store) -> None:
    store, live = big_store
    COUNTER.root, COUNTER.hits = str(store.runs_dir), []
    try:
        records = store.list_runs(status=["finished", "failed"])
        page = query_runs(store, search="bulk 4999", sort="eval:recall@1")
        groups = group_runs(store, "sweep_id")
    finally:
        COUNTER.root = ""
    assert len(records) == 49_997 and COUNTER.hits == []
    assert page.total == 8 and page.rows["name"].iloc[0] == "bulk 4999"  # 4999, 49990..6
    assert list(groups["runs"]) == [10_000, 10_000, 9_999, 9_999, 9_999, 3]
    # the runs that can still change, and only they, are read from their folders
    COUNTER.root, COUNTER.hits = str(store.runs_dir), []
    try:
        running = store.list_runs(status="running")
    finally:
        COUNTER.root = ""
    assert sorted(r.run_id for r in running) == sorted(live)
    assert {hit.split("/runs/")[1].split("/")[0] for hit in COUNTER.hits} == set(live)


def test_queries_filter_sort_group_and_page_on_the_server(big_store) -> None:
    store, _ = big_store
    page = query_runs(store, project="p1", tag="t3", sort="eval:recall@1", limit=10, offset=5)
    assert page.total == len([i for i in range(49_997) if i % 2 == 1 and i % 7 == 3])
    assert len(page.rows) == 10
    values = [float(v) for v in page.rows["main_value"]]
    assert values == sorted(values, reverse=True)
    by_lr = group_runs(store, "config.optimizer.lr", metric="eval:recall@1")
    assert set(by_lr["group"].dropna()) == {"0", "1", "2"}
    assert abs(by_lr["mean"].dropna().iloc[0] - 0.495) < 0.01 and (by_lr["std"].dropna() > 0).all()
    assert query_runs(store, config={"optimizer.lr": 2}, limit=0).total == 16_665
    assert projects(store) == ["default", "p0", "p1"]
    with pytest.raises(ValueError, match="sort/group key 'nope'"):
        query_runs(store, sort="nope")


def test_archive_and_delete_leave_the_default_listing(store: RunStore, config) -> None:
    kept, archived, deleted = (store.create_run(config, n) for n in ("kept", "arch", "gone"))
    manage.archive(store, [archived])
    manage.delete(store, [deleted])
    assert query_runs(store).rows["run_id"].tolist() == [kept]
    assert query_runs(store, archived=None, search="arch").rows["run_id"].tolist() == [archived]
    assert {r.run_id for r in store.list_runs()} == {kept, archived}
    manage.archive(store, [archived], archived=False)
    assert set(query_runs(store).rows["run_id"]) == {kept, archived}
    with pytest.raises(ValueError, match="unknown run id 'nope'"):
        manage.delete(store, [kept, "nope"])
    assert store.exists(kept)  # nothing changed before the bad id was named
    trash = store.home / "trash"
    assert len(list(trash.iterdir())) == 1
    report = manage.gc(store, dry_run=True)
    assert len(report.trash) == 1 and len(list(trash.iterdir())) == 1
    assert len(manage.gc(store).trash) == 1 and not list(trash.iterdir())


def test_gc_frees_checkpoints_beyond_the_run_policy(store: RunStore, config) -> None:
    run_id = store.create_run(config, "trained")
    store.start_run(run_id)
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step, value in ((2, 0.5), (4, 0.9), (6, 0.7)):
            tracker.track_eval({"recall@1": value}, step)
    folder = store.checkpoint_dir(run_id)
    for step in (2, 4, 6):
        (folder / f"step_{step:08d}.pt").write_bytes(b"x" * 100)
    store.end_run(run_id, "finished")
    before = query_runs(store).rows["disk_bytes"].iloc[0]
    report = manage.gc(store, dry_run=True)
    assert [path.name for _, path, _ in report.checkpoints] == ["step_00000002.pt"]
    assert len(list(folder.iterdir())) == 3
    manage.gc(store)
    assert sorted(p.name for p in folder.iterdir()) == ["step_00000004.pt", "step_00000006.pt"]
    assert query_runs(store).rows["disk_bytes"].iloc[0] == before - 100
    assert query_runs(store).rows["main_value"].iloc[0] == 0.7  # the last evaluation's
