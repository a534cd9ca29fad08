"""Who may reach the dashboard: the secret it asks for beyond loopback, and what
counts as loopback. Shared by the dashboard (``app.auth``) and the stack that starts it
(``worker.stack``), both of which depend on ``db``."""

from __future__ import annotations

# The dashboard asks for this secret when it listens beyond loopback (app/auth.py);
# `spherescope up --host <not loopback>` refuses to start without it.
TOKEN_ENV = "SPHERESCOPE_TOKEN"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


def is_loopback(address: str | None) -> bool:
    """Whether a server bound to ``address`` is reachable from this machine only
    (unset or empty means every interface)."""
    return bool(address) and (address in LOOPBACK_HOSTS or address.startswith("127."))
