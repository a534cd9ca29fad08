"""``bench/backbone_throughput.py`` in the suite, on the CPU at a small image size (the
224-px figures come from a GPU: ``bench/gpu_diagnostics_check.sh``). Its ratio is
printed, not asserted (a timed test on 2 shared cores would measure the machine); what
is checked is that both sides train the same backbone (ResNet-18 here, the script's
own default being ResNet-50: the same code path at half the suite's time), the
launched side with every step's diagnostics logged (the script asserts it), and that
the report, the JSON and the profile tables are written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "backbone_throughput.py"


@pytest.mark.slow
def test_the_benchmark_times_both_sides_and_writes_its_figures(tmp_path: Path) -> None:
    argv = [sys.executable, str(SCRIPT), "--model", "resnet18", "--image-size", "32",
            "--batch", "8", "--samples-per-class", "2", "--steps", "3", "--warmup", "1",
            "--rounds", "1", "--workers", "0", "--profile", "1"]  # fmt: skip
    env = {**os.environ, "OUT": str(tmp_path), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resnet18 32 px" in done.stdout and "ratio" in done.stdout
    result = json.loads((tmp_path / "backbone_throughput.json").read_text())
    assert len(result["bare_images_per_s"]) == len(result["launched_images_per_s"]) == 1
    assert result["ratio"] == pytest.approx(
        result["launched_images_per_s"][0] / result["bare_images_per_s"][0]
    )
    for side in ("bare", "launched"):
        table = (tmp_path / f"profile_{side}.txt").read_text()
        assert f"profile {side}: 1 steps" in table and "aten::" in table
