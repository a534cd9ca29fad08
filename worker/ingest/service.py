"""The ingest service as one of ``spherescope up``'s children: its command line, its
token (the stack's ``SPHERESCOPE_TOKEN``, or one made for it and kept in a file only
this user can read), and ``<home>/stack/ingest-url``, where writers' operators find it."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from db.network_access import TOKEN_ENV
from worker.processes import ChildProcess

URL_FILE = "ingest-url"
TOKEN_FILE = "ingest-token"


@dataclass
class IngestService:
    child: ChildProcess
    url: str
    files: tuple[Path, ...]  # removed when the stack stops
    token_note: str  # where the operator reads the token


def _private_file(path: Path, text: str) -> Path:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    return path


def start_ingest(home: str, host: str, port: int, env: Mapping[str, str]) -> IngestService:
    """Start ``python -m worker.ingest`` bound like the dashboard (``host``)."""
    env = dict(env)
    stack_dir = Path(home) / "stack"
    files: list[Path] = []
    token = env.get(TOKEN_ENV, "")
    if token:
        note = f"token: ${TOKEN_ENV}"
    else:  # loopback only (a stack beyond loopback refuses to start without one)
        token = secrets.token_urlsafe(24)
        env[TOKEN_ENV] = token
        files.append(_private_file(stack_dir / TOKEN_FILE, token))
        note = f"token in {files[-1]}"
    argv = [sys.executable, "-m", "worker.ingest", "--host", host, "--port", str(port)]
    for option, variable in (("--ssl-certfile", "SPHERESCOPE_INGEST_CERT"),
                             ("--ssl-keyfile", "SPHERESCOPE_INGEST_KEY")):  # fmt: skip
        if env.get(variable):
            argv += [option, env[variable]]
    scheme = "https" if env.get("SPHERESCOPE_INGEST_CERT") else "http"
    shown = f"[{host}]" if ":" in host else host
    url = f"{scheme}://{shown}:{port}"
    child = ChildProcess("ingest", argv, env)
    files.append(_private_file(stack_dir / URL_FILE, url))
    return IngestService(child, url, tuple(files), note)
