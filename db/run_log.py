"""The run's own log: what the training process writes to stdout, stderr and the
logging system while it runs the run, kept in ``<run dir>/log.txt``.

``capture(run_dir)`` tees ``sys.stdout`` and ``sys.stderr`` (the terminal or the
worker's log still get everything) and adds a root logging handler, so warnings of
the engine and the worker land in the file too. Size is bounded: past ``MAX_BYTES``
the file is rotated to ``log.1.txt`` (one generation kept), so a chatty run holds at
most twice that. Output written straight to the file descriptors by C extensions is
not captured (it bypasses Python's streams).

``tail(run_dir, max_bytes)`` reads the end of it for the dashboard.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

LOG_FILE, ROTATED_FILE = "log.txt", "log.1.txt"
MAX_BYTES = 1 << 20
#: Celery re-emits what a task prints through this logger: the tee already has it.
_REDIRECTED_LOGGERS = ("celery.redirected",)


SPACE_CHECK_BYTES = 64 * 1024  # free space is checked once per this much log text
MIN_FREE_BYTES = 8 * 1024 * 1024  # below this the log stops: the run's rows need the room


def _free_bytes(folder: Path) -> int:
    try:
        stats = os.statvfs(folder)
    except OSError:
        return MIN_FREE_BYTES
    return stats.f_bavail * stats.f_frsize


class _BoundedFile:
    """An append-only text file rotated once it passes ``max_bytes``; thread-safe."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path, self.max_bytes = path, max_bytes
        self.lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = path.open("a", encoding="utf-8", errors="replace")
        self.unchecked = SPACE_CHECK_BYTES  # check the free space before the first line

    def write(self, text: str) -> None:
        with self.lock:
            if self.handle.closed:
                return
            if self.unchecked >= SPACE_CHECK_BYTES:  # the data come first: the log
                self.unchecked = 0  # yields when the disk is nearly full
                if _free_bytes(self.path.parent) < MIN_FREE_BYTES:
                    self._close_quietly()
                    return
            self.unchecked += len(text)
            try:
                self.handle.write(text)
                self.handle.flush()
                if self.handle.tell() > self.max_bytes:
                    self.handle.close()
                    self.path.replace(self.path.with_name(ROTATED_FILE))
                    self.handle = self.path.open("a", encoding="utf-8", errors="replace")
            except OSError:  # e.g. a full disk: the log stops, the run and its error go on
                self._close_quietly()

    def close(self) -> None:
        with self.lock:
            self._close_quietly()

    def _close_quietly(self) -> None:
        # its last buffered text may not be writable (disk full): the run goes on
        with contextlib.suppress(OSError):
            self.handle.close()


class _Tee:
    """A text stream writing to the original stream and the run's log."""

    def __init__(self, original: TextIO, sink: _BoundedFile) -> None:
        self.original, self.sink = original, sink

    def write(self, text: str) -> int:
        self.sink.write(text)
        return self.original.write(text)

    def flush(self) -> None:
        self.original.flush()

    def __getattr__(self, name: str) -> object:  # isatty, fileno, encoding, ...
        return getattr(self.original, name)


class _SinkHandler(logging.Handler):
    def __init__(self, sink: _BoundedFile) -> None:
        super().__init__(logging.INFO)
        self.sink = sink
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if record.name in _REDIRECTED_LOGGERS:
            return
        try:
            self.sink.write(self.format(record) + "\n")
        except Exception:  # a log line must never break the run
            self.handleError(record)


@contextlib.contextmanager
def capture(run_dir: Path, max_bytes: int = MAX_BYTES) -> Iterator[Path]:
    """Tee stdout, stderr and logging into ``run_dir / LOG_FILE`` while inside."""
    sink = _BoundedFile(Path(run_dir) / LOG_FILE, max_bytes)
    handler = _SinkHandler(sink)
    root = logging.getLogger()
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Tee(stdout, sink), _Tee(stderr, sink)  # type: ignore[assignment]
    root.addHandler(handler)
    try:
        yield sink.path
    except BaseException:  # the traceback belongs in the run's log too
        sink.write(traceback.format_exc())
        raise
    finally:
        root.removeHandler(handler)
        sys.stdout, sys.stderr = stdout, stderr
        sink.close()


def tail(run_dir: Path, max_bytes: int = 20_000) -> str:
    """The last ``max_bytes`` of the run's log ("" when it has none), across a rotation."""
    current, rotated = Path(run_dir) / LOG_FILE, Path(run_dir) / ROTATED_FILE
    text = b""
    for path in (current, rotated):
        if len(text) >= max_bytes or not path.exists():
            continue
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - (max_bytes - len(text))))
            text = handle.read() + text
    return text.decode("utf-8", errors="replace")
