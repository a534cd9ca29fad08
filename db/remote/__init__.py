"""Writers on machines without the dashboard's folder: runs recorded over HTTP(S).

With ``SPHERESCOPE_URL`` (the stack's ingest address, ``spherescope up`` prints it) and
``SPHERESCOPE_TOKEN``, ``writer_store()`` gives a ``RemoteStore``: a
``db.writer_store.WriterStore`` like ``RunStore`` (what ``db.lifecycle.RunLifecycle``,
the SDK, the CLI's runs and the SLURM job write through), whose writes go, batched and
in order, through an append-only spool on the writer's own disk to the ingest service
(``worker.ingest``), which writes them into the stack's store with the same ``db``
functions a local writer uses. Checkpoints, the run log and the spool stay on the
writer's side. A command that adds to a run another process wrote (``spherescope
export-model``) sends it in a side stream of its own. Stdlib only (no torch, no HTTP
library).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from db.network_access import TOKEN_ENV

if TYPE_CHECKING:
    from db.writer_store import WriterStore

URL_ENV = "SPHERESCOPE_URL"

__all__ = ["TOKEN_ENV", "URL_ENV", "store_location", "writer_store"]


def writer_store(home: str | os.PathLike[str] | None = None) -> WriterStore:
    """Where a process that runs a run writes: the stack's store over HTTP(S) when
    ``SPHERESCOPE_URL`` is set (``home`` then holds only this side's files: checkpoints,
    logs, the spool), else the store under ``home`` (default ``$SPHERESCOPE_HOME``)."""
    url = os.environ.get(URL_ENV, "").strip()
    if not url:
        from db.store import RunStore

        return RunStore(home)
    from db.remote.store import RemoteStore

    return RemoteStore(url, os.environ.get(TOKEN_ENV, ""), home)


def store_location(store: WriterStore) -> str:
    """Where ``store`` records runs, for a message: the stack's address or the folder."""
    from db.remote.store import RemoteStore

    if isinstance(store, RemoteStore):
        return f"the stack's store at {store.url}"
    return str(store.home)
