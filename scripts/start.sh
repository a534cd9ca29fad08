#!/usr/bin/env bash
# One command to start the whole product on a fresh machine (no root, no services):
# installs into .venv, then `spherescope up` starts a private Redis (unless REDIS_URL
# is set), a worker and the dashboard on http://127.0.0.1:8501. Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec .venv/bin/spherescope up "$@"
