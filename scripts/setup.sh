#!/usr/bin/env bash
# Creates .venv (if missing) and installs SphereScope with the exact versions it is tested
# with (constraints.txt; pyproject.toml only declares compatible ranges).
# Sourced by start.sh and test.sh; safe to run again (pip skips what is installed).
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
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e "$target"
