"""A cached read outside ``streamlit run`` logs no "No runtime found" warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_READ = "from app import data; data.runs(); data.sweeps(); print('read')"


def test_a_cached_read_outside_streamlit_logs_no_runtime_warning(tmp_path):
    env = {**os.environ, "SPHERESCOPE_HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _READ], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "read" in done.stdout
    assert "No runtime found" not in done.stderr + done.stdout
