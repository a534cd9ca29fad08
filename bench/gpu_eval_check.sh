#!/usr/bin/env bash
# The evaluation's GPU checks on a lent GPU machine, in about 2–4 minutes on an H100:
# exactness of the device kNN against the CPU search, the device k-means, and the
# 1M × 512 / 200k × 512 rows of bench/eval_scale.py (ours vs bare torch matmul + topk
# + bare torch k-means). Needs torch with CUDA, numpy, scikit-learn; faiss-cpu if
# installed (e.g. `pip install --no-index faiss_cpu-*.whl` from carried wheels) is the
# CPU reference, else torch on the CPU. Figures are printed and, with $OUT set,
# written to $OUT/gpu_eval_check.json (and $OUT/eval_scale_gpu.json).
# GPU_CHECK_SIZES=NxD,... overrides the scale rows; PYTHON picks the interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" bench/gpu_eval_check.py
