#!/usr/bin/env bash
# Creates .venv (if missing) and installs SphereScope with the exact versions it is tested
# with (constraints.txt; pyproject.toml only declares compatible ranges).
# Sourced by start.sh and test.sh; safe to run again (what is installed is skipped).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "SphereScope needs Python >= 3.11 (found: $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# Install torch first, on its own, at its tested version (constraints.txt): with it in
# place, nothing else may pull a different build (on a CPU-only machine that would mean
# gigabytes of CUDA wheels).
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt torch
target="."
if [ -n "${EXTRAS:-}" ]; then
    target=".[${EXTRAS}]"
fi
# The rest through uv, which installs the pinned set in seconds where pip's resolver
# takes minutes (measured: 13 s against 2.5-3.5 min on a fresh clone, the same versions);
# it keeps the torch installed above, whose version the constraints pin. pip does it
# where uv cannot be installed.
if .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt uv \
    >/dev/null 2>&1; then
    .venv/bin/python -m uv pip install --quiet --python .venv/bin/python -c constraints.txt \
        -e "$target"
else
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt \
        -e "$target"
fi
