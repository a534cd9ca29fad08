"""HTTP(S) calls to the ingest service (stdlib ``urllib``): JSON in, JSON out, the
token as a bearer header. ``IngestRefused``: the server said no (wrong token, a bad
request), retrying cannot help; ``IngestUnreachable``: no answer, retrying may."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from db.network_access import TOKEN_ENV

API = "/v1"


class IngestRefused(RuntimeError):
    """The ingest service refused the request (the message is one line)."""


class IngestUnreachable(OSError):
    """No answer from the ingest service (network down, server restarting)."""


class IngestClient:
    def __init__(self, url: str, token: str, timeout_s: float = 30.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"SPHERESCOPE_URL must start with http:// or https://, got {url!r}")
        if not token:
            raise ValueError(f"{TOKEN_ENV} is not set: the ingest service at {url} needs it")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s

    def call(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> Any:
        """One request (``body`` as JSON, or ``raw`` JSON bytes); the decoded answer."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}{API}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            detail = _detail(error)
            if error.code in (401, 403):
                raise IngestRefused(
                    f"{self.url} refused the token in {TOKEN_ENV} (HTTP {error.code})"
                ) from None
            if error.code >= 500 or error.code in (408, 429):
                raise IngestUnreachable(f"{self.url}: HTTP {error.code} {detail}") from None
            raise IngestRefused(f"{self.url}{path}: {detail} (HTTP {error.code})") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise IngestUnreachable(f"{self.url} unreachable: {reason}") from None

    def call_patiently(self, method: str, path: str, body: Any = None, wait_s: float = 60.0):
        """``call``, retried while the service is unreachable for up to ``wait_s``
        (a run's start needs its answer: its id, its claim)."""
        deadline = time.monotonic() + wait_s
        delay = 0.25
        while True:
            try:
                return self.call(method, path, body)
            except IngestUnreachable:
                if time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 5.0)


def _detail(error: urllib.error.HTTPError) -> str:
    try:
        detail = json.loads(error.read()).get("detail", "")
    except (ValueError, AttributeError, OSError):
        detail = ""
    return str(detail or error.reason).splitlines()[0] if (detail or error.reason) else ""
