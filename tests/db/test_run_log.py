"""db.run_log: the run's stdout, stderr and logging, teed into a bounded log file."""

from __future__ import annotations

import logging
import sys

import pytest

from db import run_log


def test_capture_tees_streams_and_logging_into_the_run_folder(tmp_path, capsys):
    with run_log.capture(tmp_path) as path:
        print("step 1 loss 0.5")
        print("a warning on stderr", file=sys.stderr)
        logging.getLogger("sphere_engine.train").warning("lr is large")
    assert path == tmp_path / run_log.LOG_FILE
    text = path.read_text()
    assert "step 1 loss 0.5" in text and "a warning on stderr" in text
    assert "WARNING sphere_engine.train: lr is large" in text
    assert "step 1 loss 0.5" in capsys.readouterr().out  # the terminal still gets it
    print("after the run")
    assert "after the run" not in path.read_text()


def test_a_failure_leaves_its_traceback_in_the_log(tmp_path):
    with pytest.raises(RuntimeError), run_log.capture(tmp_path):
        raise RuntimeError("loss became NaN")
    text = run_log.tail(tmp_path)
    assert "Traceback" in text and "RuntimeError: loss became NaN" in text


def test_size_is_bounded_and_the_tail_spans_the_rotation(tmp_path):
    with run_log.capture(tmp_path, max_bytes=1000):
        for i in range(300):
            print(f"line {i:04d}")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [run_log.ROTATED_FILE, run_log.LOG_FILE]
    assert all(p.stat().st_size <= 1000 + 20 for p in tmp_path.iterdir())
    tail = run_log.tail(tmp_path, max_bytes=1500)
    assert tail.rstrip().endswith("line 0299") and "line 0200" in tail
    assert run_log.tail(tmp_path / "nothing") == ""
