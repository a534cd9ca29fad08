#!/usr/bin/env bash
# One command to set everything up and run the whole test suite (lint included).
# Browser tests need Chromium: installed from Debian's packages when missing and we
# are root (CI); elsewhere they are skipped unless CI=true, where they must run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
EXTRAS=test bash scripts/setup.sh

if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "installing Chromium for the browser tests" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
        >/dev/null 2>&1 || echo "warning: could not install chromium" >&2
fi

if ! command -v slurmctld >/dev/null && [ ! -x /usr/sbin/slurmctld ] && [ "$(id -u)" = "0" ] \
    && command -v apt-get >/dev/null; then
    echo "installing SLURM and munge for the SLURM tests" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge) \
        >/dev/null 2>&1 || echo "warning: could not install SLURM" >&2
fi

.venv/bin/ruff check .
.venv/bin/ruff format --check .
# pytest exits 5 when it collected no tests: that is a failure here too.
# Every core: the SLURM cluster and the shared dashboard stack stay on one worker each
# (tests/conftest.py groups their tests).
exec .venv/bin/python -m pytest -n auto --dist loadgroup "$@"
