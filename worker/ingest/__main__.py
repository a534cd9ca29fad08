"""``python -m worker.ingest --host H --port P``: serve the ingest API on the store of
``$SPHERESCOPE_HOME``. It needs ``SPHERESCOPE_TOKEN`` on any address (it writes runs),
so it never listens without one; TLS with ``--ssl-certfile`` / ``--ssl-keyfile``."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from db.network_access import TOKEN_ENV


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m worker.ingest")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8502)
    parser.add_argument("--ssl-certfile", default=None)
    parser.add_argument("--ssl-keyfile", default=None)
    args = parser.parse_args(argv)
    token = os.environ.get(TOKEN_ENV, "")
    if not token:
        print(
            f"spherescope ingest: {TOKEN_ENV} is not set: the ingest service writes runs "
            "for whoever knows it, so it needs one",
            file=sys.stderr,
        )
        return 2
    import uvicorn

    from db.store import RunStore
    from worker.ingest.app import create_app

    logging.basicConfig(level=logging.WARNING, format="spherescope ingest: %(message)s")
    uvicorn.run(
        create_app(RunStore(), token),
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        ssl_certfile=args.ssl_certfile,
        ssl_keyfile=args.ssl_keyfile,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
