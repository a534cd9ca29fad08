"""The faiss and torch/scikit-learn paths are selectable and give the same numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sphere_engine.metrics import backend as backends
from sphere_engine.metrics import evaluate_embeddings, resolve_backend

ROOT = Path(__file__).resolve().parents[3]


def test_auto_prefers_faiss_and_falls_back_without_it(monkeypatch):
    assert resolve_backend("auto") == "faiss"
    monkeypatch.setattr(backends, "FAISS_AVAILABLE", False)
    assert resolve_backend("auto") == "torch"
    with pytest.raises(ValueError, match="faiss is not importable"):
        resolve_backend("faiss")


def test_both_backends_give_the_same_full_result(blobs, monkeypatch):
    x, y = blobs
    with_faiss = evaluate_embeddings(x, y, backend="faiss")
    monkeypatch.setattr(backends, "FAISS_AVAILABLE", False)
    without = evaluate_embeddings(x, y)  # auto → torch + scikit-learn
    assert without.keys() == with_faiss.keys()
    for name, value in with_faiss.items():
        assert without[name] == pytest.approx(value, abs=1e-6), name


def test_works_when_faiss_cannot_be_imported(tmp_path):
    script = (
        "import sys, json\n"
        "sys.modules['faiss'] = None  # makes `import faiss` raise ImportError\n"
        "import numpy as np\n"
        "from sphere_engine.metrics import backend, evaluate_embeddings\n"
        "x = np.random.default_rng(0).normal(size=(60, 5)).astype('float32')\n"
        "r = evaluate_embeddings(x, np.repeat(np.arange(3), 20))\n"
        "print(json.dumps([backend.FAISS_AVAILABLE, r['map@r'], r['nmi']]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    available, map_r, nmi_value = json.loads(done.stdout.strip().splitlines()[-1])
    assert available is False
    x = np.random.default_rng(0).normal(size=(60, 5)).astype("float32")
    in_process = evaluate_embeddings(x, np.repeat(np.arange(3), 20), backend="torch")
    assert map_r == pytest.approx(in_process["map@r"], abs=1e-12)
    assert nmi_value == pytest.approx(in_process["nmi"], abs=1e-12)
