from __future__ import annotations

import pytest

from db import RunStore

CONFIG = {
    "model": {"name": "mlp", "embedding_dim": 64},
    "optimizer": {"name": "adam", "lr": 0.001},
    "training": {"steps": 300, "seed": 0},
}


@pytest.fixture
def store(tmp_path) -> RunStore:
    return RunStore(tmp_path / "home")


@pytest.fixture
def config() -> dict:
    return {section: dict(values) for section, values in CONFIG.items()}
