"""Settings for the whole suite, which runs on every core (pytest-xdist, ``--dist loadgroup``).

- torchvision is importable in every pytest process: xdist's controller rebuilds the
  warnings its workers report, and a warning class from lightning imports torchmetrics →
  torchvision, which dies on this CPU-only torch unless ``tv_compat`` ran first.
- A session fixture that starts daemons is started once per xdist worker that asks for
  it, so the tests sharing one are kept on one worker.
"""

from __future__ import annotations

import pytest

import sphere_engine.tv_compat  # noqa: F401

# fixture name → the xdist group of every test that uses it
DAEMON_FIXTURE_GROUPS = {"slurm": "slurm-cluster", "shared_stack": "shared-stack"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, group in DAEMON_FIXTURE_GROUPS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(group))
