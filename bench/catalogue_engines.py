"""The run catalogue against the engines a lab might use instead, at 50,000 runs.

Why the store keeps its own catalogue (immutable Parquet snapshot + JSON deltas) rather
than PostgreSQL or DuckLake: the same runs and the same five operations on each, in one
run of this script, with the ratio to the catalogue printed per operation.

* ``catalogue``: SphereScope's (``db/catalogue``), filled as ``bench/store_scale.py``
  fills it; the operations go through the store's own functions.
* ``postgres``: one ``runs`` table (JSONB config and metrics, indexes on project /
  created and on the live statuses) in a private server (``initdb`` + ``pg_ctl`` in a
  temporary folder as the ``postgres`` user, a free port; never the one on 5432).
* ``ducklake (postgres)`` and ``ducklake (duckdb file)``: a DuckLake ``runs`` table,
  its catalogue in that private PostgreSQL or in a DuckDB file, its data as Parquet.

Operations: open (what every new process pays before its first read: the CLI, each
worker's reaper), live runs (what the reaper reads every 5 s), a page of 50 (the Runs
page's newest first, one project), a search (substring of name, notes, tags, config),
one status change (what every writer does at every transition), and the page again
after 500 changes (what an engine that turns each update into files pays until it
compacts).

DuckLake exists on PyPI only for DuckDB 1.4.x while the project pins DuckDB 2.0.0, so
the PostgreSQL and DuckLake parts run in a throwaway environment that this script
creates once (``--lake-env``, default ``/tmp/spherescope-lake-env``: DuckDB 1.4.4,
``duckdb-ext-ducklake``, ``duckdb-ext-postgres``, ``psycopg[binary]`` from PyPI).

    .venv/bin/python bench/catalogue_engines.py [--runs 50000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAKE_PACKAGES = ["duckdb==1.4.4", "duckdb-ext-ducklake==1.4.4.*", "duckdb-ext-postgres==1.4.4.*",
                 "psycopg[binary]>=3.2,<4", "pyarrow"]  # fmt: skip
LIVE = ("queued", "running", "lost")
STATUSES = ("finished",) * 8 + ("failed", "cancelled")
SEARCH = "run 4242"
CHANGES = 500


def median_ms(action, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- the engines of the throwaway environment (no project import below this line) ---


def lake_rows(count: int, live: int) -> list[tuple]:
    """The same runs as ``bench/store_scale.fill`` writes, as table rows."""
    now = time.time() - count
    rows = []
    for index in range(count):
        is_live = index >= count - live
        status = ("queued", "running")[index % 2] if is_live else STATUSES[index % len(STATUSES)]
        value = 0.5 + (index % 97) / 300
        config = {"data": {"name": "digits", "batch_size": 64},
                  "optimizer": {"name": "adam", "lr": [1e-3, 3e-4, 1e-4][index % 3]},
                  "training": {"steps": 2000, "seed": index % 5}}  # fmt: skip
        rows.append((
            f"r{index:06d}", f"run {index}", status, "train", f"project-{index % 4}",
            f"sweep-{index // 100}", json.dumps(["lab", f"arm:{index % 4}"]), "",
            json.dumps(config), now + index, None if is_live else now + index + 600,
            json.dumps({"eval:recall@1": value, "eval:nmi": value / 2}), False, 40_000,
        ))  # fmt: skip
    return rows


COLUMNS = ("run_id, name, status, kind, project, sweep_id, tags, notes, config, created_at, "
           "ended_at, metrics, archived, disk_bytes")  # fmt: skip
PAGE_SQL = ("SELECT run_id, name, status, created_at, metrics FROM runs WHERE project = {p} "
            "AND NOT archived ORDER BY created_at DESC LIMIT 50")  # fmt: skip
SEARCH_SQL = ("SELECT run_id FROM runs WHERE NOT archived AND (lower(name) LIKE {p} OR "
              "lower(notes) LIKE {p} OR lower(tags) LIKE {p} "
              "OR lower(config) LIKE {p})")  # fmt: skip
LIVE_SQL = "SELECT run_id, status FROM runs WHERE status IN ('queued', 'running', 'lost')"
UPDATE_SQL = "UPDATE runs SET status = {p} WHERE run_id = {p}"


def first_page(db, placeholder: str) -> None:
    """What a new process (the CLI, a worker's reaper, a dashboard) pays for its first read."""
    db.execute(PAGE_SQL.format(p=placeholder), ["project-1"]).fetchall()
    db.close()


def start_postgres(root: Path) -> tuple[subprocess.Popen | None, str]:
    """A private server: its own data folder and free port, run as ``postgres``."""
    data = root / "pg"
    data.mkdir(parents=True)
    shutil.chown(root, "postgres")
    shutil.chown(data, "postgres")
    as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*as_pg, "initdb", "-D", str(data), "-A", "trust", "-U", "bench"],
                   check=True, capture_output=True)  # fmt: skip
    port = free_port()
    subprocess.run([*as_pg, "pg_ctl", "-D", str(data), "-l", str(root / "pg.log"), "-w", "-o",
                    f"-p {port} -k {root} -c listen_addresses=127.0.0.1", "start"],
                   check=True, capture_output=True)  # fmt: skip
    return None, f"host=127.0.0.1 port={port} user=bench dbname=postgres"


def stop_postgres(root: Path) -> None:
    as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*as_pg, "pg_ctl", "-D", str(root / "pg"), "-m", "fast", "stop"],
                   capture_output=True)  # fmt: skip


def postgres_figures(dsn: str, rows: list[tuple]) -> dict[str, float]:
    import psycopg

    def connect():
        return psycopg.connect(dsn, autocommit=True)

    with connect() as db:
        db.execute("DROP TABLE IF EXISTS runs")
        db.execute("""CREATE TABLE runs (run_id text PRIMARY KEY, name text, status text,
            kind text, project text, sweep_id text, tags text, notes text, config text,
            created_at double precision, ended_at double precision, metrics jsonb,
            archived boolean, disk_bytes bigint)""")
        with db.cursor() as cursor, cursor.copy(f"COPY runs ({COLUMNS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        db.execute("CREATE INDEX ON runs (project, created_at DESC)")
        db.execute("CREATE INDEX ON runs (status) WHERE status IN ('queued','running','lost')")
        db.execute("ANALYZE runs")
        live_ids = [r[0] for r in db.execute(LIVE_SQL).fetchall()]
        figures = {
            "open + first page": median_ms(lambda: first_page(connect(), "%s")),
            "live runs": median_ms(lambda: db.execute(LIVE_SQL).fetchall()),
            "page of 50": median_ms(
                lambda: db.execute(PAGE_SQL.format(p="%s"), ["project-1"]).fetchall()),
            "search": median_ms(
                lambda: db.execute(SEARCH_SQL.format(p="%s"), [f"%{SEARCH}%"] * 4).fetchall()),
            "one status change": median_ms(
                lambda: db.execute(UPDATE_SQL.format(p="%s"), ["running", live_ids[0]])),
        }  # fmt: skip
        for index in range(CHANGES):
            db.execute(UPDATE_SQL.format(p="%s"), [("running", "queued")[index % 2],
                                                   live_ids[index % len(live_ids)]])  # fmt: skip
        figures["page after 500 changes"] = median_ms(
            lambda: db.execute(PAGE_SQL.format(p="%s"), ["project-1"]).fetchall()
        )
    return figures


def ducklake_figures(catalogue: str, data_path: Path, rows: list[tuple]) -> dict[str, float]:
    import duckdb
    import duckdb_ext  # the wheels' extension folder

    extensions = Path(duckdb_ext.__path__[0]) / "extensions" / f"v{duckdb.__version__}"
    files = {p.stem: p for p in extensions.rglob("*.duckdb_extension")}

    def connect():
        db = duckdb.connect()
        for name in ("postgres_scanner", "ducklake"):
            if name in files:
                db.execute(f"LOAD '{files[name]}'")
        db.execute(f"ATTACH 'ducklake:{catalogue}' AS lake (DATA_PATH '{data_path}')")
        db.execute("USE lake")
        return db

    db = connect()
    db.execute("""CREATE TABLE runs (run_id VARCHAR, name VARCHAR, status VARCHAR,
        kind VARCHAR, project VARCHAR, sweep_id VARCHAR, tags VARCHAR, notes VARCHAR,
        config VARCHAR, created_at DOUBLE, ended_at DOUBLE, metrics VARCHAR,
        archived BOOLEAN, disk_bytes BIGINT)""")
    import pyarrow as pa

    names = [c.strip() for c in COLUMNS.split(",")]
    table = pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})
    db.register("incoming", table)
    db.execute("INSERT INTO runs SELECT * FROM incoming")
    db.close()  # one attach of a DuckDB-file catalogue per process: reopened below
    opened = median_ms(lambda: first_page(connect(), "?"), 3)
    db = connect()
    # what a second process (another worker's reaper, the CLI) meets meanwhile
    loads = "; ".join(f"db.execute(\"LOAD '{files[n]}'\")" for n in ("postgres_scanner", "ducklake")
                      if n in files)  # fmt: skip
    probe = (
        f"import duckdb; db = duckdb.connect(); {loads}; "
        f"db.execute(\"ATTACH 'ducklake:{catalogue}' AS lake (DATA_PATH '{data_path}')\")"
    )
    second = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if second.returncode:
        print(
            f"{catalogue[:40]}: a second process cannot attach: "
            f"{second.stderr.strip().splitlines()[-1][:160]}",
            file=sys.stderr,
        )
    live_ids = [r[0] for r in db.execute(LIVE_SQL).fetchall()]
    figures = {
        "open + first page": opened,
        "live runs": median_ms(lambda: db.execute(LIVE_SQL).fetchall()),
        "page of 50": median_ms(
            lambda: db.execute(PAGE_SQL.format(p="?"), ["project-1"]).fetchall()),
        "search": median_ms(
            lambda: db.execute(SEARCH_SQL.format(p="?"), [f"%{SEARCH}%"] * 4).fetchall()),
        "one status change": median_ms(
            lambda: db.execute(UPDATE_SQL.format(p="?"), ["running", live_ids[0]])),
    }  # fmt: skip
    for index in range(CHANGES):
        db.execute(UPDATE_SQL.format(p="?"), [("running", "queued")[index % 2],
                                              live_ids[index % len(live_ids)]])  # fmt: skip
    figures["page after 500 changes"] = median_ms(
        lambda: db.execute(PAGE_SQL.format(p="?"), ["project-1"]).fetchall()
    )
    figures["data files after the changes"] = float(len(list(data_path.rglob("*.parquet"))))
    figures["second process attaches"] = float(second.returncode == 0)
    db.close()
    return figures


def lake_child(count: int, live: int, root: Path) -> None:
    """Runs in the throwaway environment: prints one JSON line of figures per engine."""
    rows = lake_rows(count, live)
    _, dsn = start_postgres(root)
    try:
        out = {"postgres": postgres_figures(dsn, rows)}
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as db:
            db.execute("CREATE DATABASE lake")
        lake_dsn = dsn.replace("dbname=postgres", "dbname=lake")
        (root / "lake-pg").mkdir()
        out["ducklake (postgres)"] = ducklake_figures(f"postgres:{lake_dsn}", root / "lake-pg",
                                                      rows)  # fmt: skip
        (root / "lake-file").mkdir()
        out["ducklake (duckdb file)"] = ducklake_figures(str(root / "lake.ducklake"),
                                                         root / "lake-file", rows)  # fmt: skip
    finally:
        stop_postgres(root)
    print(json.dumps(out))


# --- SphereScope's catalogue, in the project's environment ---


def catalogue_figures(count: int, live: int) -> dict[str, float]:
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).parent)]
    from store_scale import fill

    from db.catalogue import journal
    from db.catalogue.query import query_runs
    from db.store import RunStore

    root = Path(tempfile.mkdtemp(prefix="catalogue-engines-"))
    try:
        fill(root / "home", count, live)
        store = RunStore(root / "home")
        live_rows = [r for r in journal.read_live_rows(store.files).values()
                     if r["status"] in LIVE]  # fmt: skip
        running = [r["run_id"] for r in live_rows if r["status"] == "running"]
        query_runs(store, project="project-1")  # the snapshot read once, as a server has it
        from db.catalogue import snapshot

        def first_page() -> None:
            snapshot._cache.clear()  # a new process has not read the snapshot yet
            query_runs(RunStore(root / "home"), project="project-1")

        def live_runs() -> list:
            return [r for r in journal.read_live_rows(store.files).values() if r["status"] in LIVE]

        figures = {
            "open + first page": median_ms(first_page),
            "live runs": median_ms(live_runs),
            "page of 50": median_ms(lambda: query_runs(store, project="project-1")),
            "search": median_ms(lambda: query_runs(store, search=SEARCH)),
            "one status change": median_ms(
                lambda: store.set_status(running[0], "running", message="step")
            ),
        }
        for index in range(CHANGES):
            store.set_status(running[index % len(running)], "running", message=f"step {index}")
        figures["page after 500 changes"] = median_ms(
            lambda: query_runs(store, project="project-1")
        )
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def lake_env(path: Path) -> Path:
    python = path / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *LAKE_PACKAGES], check=True, capture_output=True)  # fmt: skip
    return python


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50_000)
    parser.add_argument("--live", type=int, default=50)
    parser.add_argument("--lake-env", type=Path, default=Path("/tmp/spherescope-lake-env"))
    parser.add_argument("--lake-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.lake_child:
        lake_child(args.runs, args.live, args.lake_child)
        return 0
    print(f"{args.runs} runs ({args.live} live); load {os.getloadavg()[0]:.1f}")
    python = lake_env(args.lake_env)
    root = Path(tempfile.mkdtemp(prefix="catalogue-engines-lake-"))
    try:
        child = subprocess.run(
            [str(python), __file__, "--runs", str(args.runs), "--live", str(args.live),
             "--lake-child", str(root)], capture_output=True, text=True, check=False,
        )  # fmt: skip
        print(child.stderr, file=sys.stderr, end="")
        if child.returncode:
            return 1
        engines = {"catalogue": catalogue_figures(args.runs, args.live)}
        engines |= json.loads(child.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    operations = list(engines["catalogue"])
    print(f"{'operation (ms)':<26}" + "".join(f"{name:>24}" for name in engines))
    for operation in operations:
        base = engines["catalogue"][operation]
        cells = []
        for figures in engines.values():
            value = figures.get(operation, float("nan"))
            cells.append(f"{value:10.1f} ({value / base:5.1f}x)")
        print(f"{operation:<26}" + "".join(f"{c:>24}" for c in cells))
    for name in ("ducklake (postgres)", "ducklake (duckdb file)"):
        figures = engines[name]
        print(
            f"{name}: {figures['data files after the changes']:.0f} Parquet files after "
            f"{CHANGES} changes (before compaction); a second process attaches while one "
            f"is open: {'yes' if figures['second process attaches'] else 'no'}"
        )
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
