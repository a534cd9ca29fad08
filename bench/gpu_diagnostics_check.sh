#!/usr/bin/env bash
# The diagnostics' GPU check on a lent GPU machine (about 6 minutes on an H200): the CUDA-graph
# diagnostics against the eager ones (tests/sphere_engine/test_cuda_graph_diagnostics.py,
# which skips its CUDA tests on a CPU), then bench/backbone_throughput.py at 224 px
# (ResNet-50, batch 64, bf16, channels_last, 12 workers), with 64-px and 252-px source
# PNGs, after an untimed block of each side. Each part has its own time limit and the
# next runs whatever the last gave. With $OUT set, results land in $OUT/s64 and $OUT/s252.
# PYTHON picks the interpreter.
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 120 "$PY" -m pytest --noconftest -p no:cacheprovider -q -rs \
    tests/sphere_engine/test_cuda_graph_diagnostics.py 2>&1 | tail -25
bench=("$PY" bench/backbone_throughput.py --device cuda --image-size 224 --batch 64 --amp bf16
       --workers 12 --steps 300 --warmup 30 --warmup-block)
mkdir -p "${OUT:-/tmp}/s64" "${OUT:-/tmp}/s252"
OUT="${OUT:-/tmp}/s64" timeout 180 "${bench[@]}" --rounds 3 --profile 30 --source-side 64 2>&1 \
    | grep -v "USDT\|^ *-\|^ *$\|^ \+[a-zA-Z]\|^autograd\|^void\|^Self\|^ *Name"
OUT="${OUT:-/tmp}/s252" timeout 130 "${bench[@]}" --rounds 2 2>&1 | grep -v USDT
