"""A run's append-only spool on the writer's disk: every batch of operations is
written here first, numbered, then sent in order; what the server acknowledged is
remembered in ``acked``. A batch is never sent under two numbers, and the server drops
a number it already has, so a step is stored once however often it is resent."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from db import layout

BATCHES = "batches.jsonl"
ACKED = "acked"


class Spool:
    """``folder``/batches.jsonl (one JSON line per batch: ``{"seq", "ops"}``) and
    ``folder``/acked (the highest sequence number the server holds)."""

    def __init__(self, folder: Path) -> None:
        self.folder = layout.ensure_folder(folder)
        self._lock = threading.Lock()
        self._path = folder / BATCHES
        self._offsets: list[tuple[int, int, int]] = []  # unacked: (seq, offset, length)
        self.acked = self._read_acked()
        self.last_seq = self.acked
        if self._path.exists():  # a spool left by an earlier process of this run
            offset = 0
            with open(self._path, "rb") as handle:
                for line in handle:
                    seq = int(json.loads(line)["seq"])
                    if seq > self.acked:
                        self._offsets.append((seq, offset, len(line)))
                    self.last_seq = max(self.last_seq, seq)
                    offset += len(line)

    def _read_acked(self) -> int:
        try:
            return int((self.folder / ACKED).read_text("ascii").strip() or 0)
        except (OSError, ValueError):
            return 0

    def append(self, ops: list[Any]) -> int:
        """Write one batch (durably) and return its number."""
        with self._lock:
            seq = self.last_seq + 1
            line = (json.dumps({"seq": seq, "ops": ops}) + "\n").encode("utf-8")
            with open(self._path, "ab") as handle:
                offset = handle.tell()
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            self._offsets.append((seq, offset, len(line)))
            self.last_seq = seq
            return seq

    def pending(self, max_bytes: int) -> list[bytes]:
        """The oldest unacknowledged batches as their JSON lines, in order, about
        ``max_bytes`` at most (always at least one when any is pending)."""
        with self._lock:
            chosen, size = [], 0
            for entry in self._offsets:
                if chosen and size + entry[2] > max_bytes:
                    break
                chosen.append(entry)
                size += entry[2]
        lines = []
        with open(self._path, "rb") as handle:
            for _, offset, length in chosen:
                handle.seek(offset)
                lines.append(handle.read(length).rstrip(b"\n"))
        return lines

    def unacked(self) -> int:
        with self._lock:
            return len(self._offsets)

    def ack(self, seq: int) -> None:
        """The server holds every batch up to ``seq``."""
        with self._lock:
            if seq <= self.acked:
                return
            self.acked = seq
            self._offsets = [entry for entry in self._offsets if entry[0] > seq]
            temp = self.folder / f".{ACKED}.tmp"
            temp.write_text(f"{seq}\n", "ascii")
            os.replace(temp, self.folder / ACKED)
