"""The worker's log stays quiet: no superuser warning for a JSON-only
app running as root (containers, CI), no faiss loader chatter in every run's child."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from worker.celery_app import app


def test_no_superuser_warning_for_a_json_only_app():
    if os.getuid() != 0:
        pytest.skip("the warning is only given to root")
    assert "pickle" not in app.conf.accept_content
    # a fresh interpreter: pytest's own warning filters would hide the module's filter
    check = (
        "from celery.platforms import check_privileges\n"
        "from worker.celery_app import app\n"
        "check_privileges(set(app.conf.accept_content))\n"
    )
    result = subprocess.run(
        [sys.executable, "-W", "default", "-c", check], capture_output=True, text=True, check=True
    )
    assert "superuser" not in result.stderr


def test_faiss_loader_logs_only_warnings():
    assert logging.getLogger("faiss.loader").getEffectiveLevel() >= logging.WARNING
