"""``spherescope up`` and ``spherescope worker``: start processes, watch them, stop them.

``up`` starts (1) a private Redis unless ``REDIS_URL`` is set (password-protected, its
URL written to ``<home>/stack/redis-url`` for ``spherescope status``), (2) the workers
the hardware allows (see ``processes.plan_workers``), (3) the Streamlit app bound to
``--host`` (default 127.0.0.1; another address needs ``SPHERESCOPE_TOKEN``) and, beside
it, the ingest service for writers without the store's folder (``worker.ingest``).

While it runs it restarts the private Redis if that dies (same port, password and data)
and stops everything if a child exits or Redis cannot be restarted. The first Ctrl-C or
SIGTERM stops gracefully (``worker.shutdown``: running runs end ``cancelled`` with their
final checkpoint); a second one forces.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from db.layout import resolve_home
from db.network_access import TOKEN_ENV, is_loopback
from db.store import RunStore
from worker import processes, settings
from worker.ingest.service import start_ingest
from worker.redis_server import PrivateRedis, masked
from worker.shutdown import stop_workers_gracefully, workers_idle

#: The dashboard server (serves app/main.py; see its docstring).
APP_MAIN = Path(__file__).resolve().parent.parent / "app" / "server.py"
POLL_S = 0.5
REDIS_RESTART_ATTEMPTS = 3
REDIS_MAX_RESTARTS = 5  # within REDIS_RESTART_WINDOW_S: a Redis that keeps dying stops the stack
REDIS_RESTART_WINDOW_S = 60.0


def say(message: str, error: bool = False) -> None:
    print(f"spherescope: {message}", file=sys.stderr if error else sys.stdout, flush=True)


class StopSignals:
    """Counts SIGINT/SIGTERM while installed: the first asks for a graceful stop, the
    second forces it. (Children run in their own sessions: a terminal's Ctrl-C reaches
    only this process.)"""

    def __init__(self) -> None:
        self.count = 0
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count == 1:
            say(
                f"{signal.Signals(signum).name}: stopping (running runs end cancelled); "
                "again to force"
            )
        elif self.count == 2:
            say("forcing the stop")

    def forced(self) -> bool:
        return self.count >= 2

    def __enter__(self) -> StopSignals:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *_: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)  # type: ignore[arg-type]


def app_argv(host: str, port: int) -> list[str]:
    """The dashboard's command line. Serving, not developing: no source-file watcher
    (its polling thread cost ~10 % of the server's CPU) and no full garbage collection
    after every script run (``runner.postScriptGC``: a gen-2 ``gc.collect`` after each
    live refresh of every watching tab was a fifth of the server's CPU)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP_MAIN),
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--runner.postScriptGC",
        "false",
        # app/static: the vendored Vega the Run page's live charts load (offline)
        "--server.enableStaticServing",
        "true",
    ]


class RedisSupervisor:
    """Restarts a private Redis that died; gives up after ``REDIS_RESTART_ATTEMPTS``
    failed starts in a row or ``REDIS_MAX_RESTARTS`` restarts within a minute."""

    def __init__(self, server: PrivateRedis) -> None:
        self.server = server
        self.restarts: list[float] = []

    def check(self) -> bool:
        """True while Redis runs (restarted if needed); False: stop the stack."""
        process = self.server.process
        if process is None or process.poll() is None:
            return True
        now = time.monotonic()
        self.restarts = [t for t in self.restarts if now - t < REDIS_RESTART_WINDOW_S]
        if len(self.restarts) >= REDIS_MAX_RESTARTS:
            say(
                f"the private Redis died {len(self.restarts) + 1} times within "
                f"{REDIS_RESTART_WINDOW_S:.0f} s; stopping the stack",
                error=True,
            )
            return False
        self.restarts.append(now)
        say(
            f"the private Redis exited (code {process.returncode}); restarting it on port "
            f"{self.server.port} with the same password and data",
            error=True,
        )
        error: Exception | None = None
        for attempt in range(REDIS_RESTART_ATTEMPTS):
            if attempt:
                time.sleep(1.0)
            started = time.monotonic()
            try:
                self.server.restart(timeout_s=10.0)
            except (RuntimeError, OSError) as failure:
                error = failure
                continue
            say(f"private Redis restarted in {time.monotonic() - started:.1f} s")
            return True
        say(
            f"could not restart the private Redis ({error}; {REDIS_RESTART_ATTEMPTS} "
            "attempts); stopping the stack",
            error=True,
        )
        return False


def watch(
    children: Sequence[processes.ChildProcess],
    signals: StopSignals,
    supervisor: RedisSupervisor | None = None,
) -> int:
    """Block until a stop signal (0), a child's own exit (1) or a Redis beyond repair (1)."""
    while not signals.count:
        for child in children:
            code = child.poll()
            if code is not None:
                say(f"{child.label} exited with code {code}; stopping", error=True)
                return 1
        if supervisor is not None and not supervisor.check():
            return 1
        time.sleep(POLL_S)
    return 0


def start_workers(
    redis_url: str, home: str, concurrency: int, gpus: int | None = None
) -> list[processes.ChildProcess]:
    gpus = processes.count_gpus() if gpus is None else gpus
    children = []
    for spec in processes.plan_workers(gpus, concurrency):
        env = processes.child_env(redis_url, home, spec.env)
        children.append(processes.ChildProcess(f"worker {spec.name}", spec.argv(), env))
    return children


def write_stack_url(home: str, url: str) -> Path:
    """The private URL (with its password) in a file only this user can read (0600)."""
    path = settings.stack_url_file(home)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(url + "\n")
    os.replace(tmp, path)
    return path


def exposed_without_token(host: str, with_app: bool) -> bool:
    return with_app and not is_loopback(host) and not os.environ.get(TOKEN_ENV)


def up(host: str, port: int, concurrency: int, with_app: bool = True, ingest_port: int = 0) -> int:
    if exposed_without_token(host, with_app):
        say(
            f"--host {host} makes the dashboard reachable from other machines: set "
            f"{TOKEN_ENV} to a secret first (the dashboard then asks for it)",
            error=True,
        )
        return 2
    home = str(resolve_home(None))
    redis_server = supervisor = url_file = None
    workers: list[processes.ChildProcess] = []
    others: list[processes.ChildProcess] = []
    stack_files: list[Path] = []
    code = 1
    with StopSignals() as signals:
        try:
            redis_url = os.environ.get("REDIS_URL", "")
            if not redis_url:
                redis_server = PrivateRedis().start()
                supervisor = RedisSupervisor(redis_server)
                redis_url = redis_server.url
                url_file = write_stack_url(home, redis_url)
                say(
                    f"private Redis on {masked(redis_url)} (password-protected; "
                    f"full URL in {url_file})"
                )
            workers = start_workers(redis_url, home, concurrency)
            from worker.study.control import resume_unfinished_studies  # optuna: on use

            for study_id in resume_unfinished_studies(home, redis_url):
                say(f"study {study_id} resumed: its coordinator was not running")
            if with_app:
                env = processes.child_env(redis_url, home)
                others.append(processes.ChildProcess("app", app_argv(host, port), env))
                say(f"dashboard on http://{host}:{port}")
                ingest = start_ingest(home, host, ingest_port or port + 1, env)
                others.append(ingest.child)
                stack_files.extend(ingest.files)
                say(f"ingest service on {ingest.url} ({ingest.token_note})")
            say(f"run store {home}; Ctrl-C stops everything")
            code = watch([*workers, *others], signals, supervisor)
        finally:
            stop_stack(workers, others, signals, redis_server, url_file, home)
            for path in stack_files:
                path.unlink(missing_ok=True)
    return code


def stop_stack(
    workers: Sequence[processes.ChildProcess],
    others: Sequence[processes.ChildProcess],
    signals: StopSignals,
    redis_server: PrivateRedis | None,
    url_file: Path | None,
    home: str | None = None,
) -> None:
    """The app first (no new launches), then the studies' coordinators (the next ``up``
    resumes them), then the workers gracefully, then Redis."""
    processes.stop_all(others)
    if home is not None and workers:
        from worker.study.control import stop_coordinators  # optuna: on use

        for study_id in stop_coordinators(home):
            say(f"study {study_id}: coordinator stopped (the next start resumes it)")
    if workers and not signals.forced():
        started = time.monotonic()
        cancelled = stop_workers_gracefully(RunStore(), workers, signals.forced)
        if cancelled:
            say(
                f"{len(cancelled)} running run(s) cancelled in "
                f"{time.monotonic() - started:.1f} s: {', '.join(cancelled)}"
            )
    quick = signals.forced() or workers_idle(RunStore(), workers)
    processes.stop_all(workers, grace_s=1.0 if quick else 10.0)
    if redis_server is not None:
        redis_server.close()
    if url_file is not None:
        url_file.unlink(missing_ok=True)
    say("stopped")


def worker(concurrency: int, cpu_only: bool = False) -> int:
    """Extra workers for this machine against the configured broker and store."""
    redis_url = settings.configured_redis_url()
    if not redis_url:
        print(
            f"spherescope worker: {settings.REDIS_URL_MISSING} "
            "(and SPHERESCOPE_HOME to the shared run store)",
            file=sys.stderr,
        )
        return 2
    children = start_workers(
        redis_url, str(resolve_home(None)), concurrency, gpus=0 if cpu_only else None
    )
    with StopSignals() as signals:
        try:
            return watch(children, signals)
        finally:
            if not signals.forced():
                stop_workers_gracefully(RunStore(), children, signals.forced)
            quick = signals.forced() or workers_idle(RunStore(), children)
            processes.stop_all(children, grace_s=1.0 if quick else 10.0)
