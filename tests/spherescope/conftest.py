"""Shared pieces of the SDK tests: a tiny digits-like problem and store read-back."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from db.store import RunStore


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh store, also as SPHERESCOPE_HOME (the SDK's default)."""
    folder = tmp_path / "store"
    monkeypatch.setenv("SPHERESCOPE_HOME", str(folder))
    monkeypatch.setenv("SPHERESCOPE_HEARTBEAT_S", "0.2")
    return folder


@pytest.fixture()
def store(home: Path) -> RunStore:
    return RunStore(home)


def toy_problem(seed: int = 0) -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """A small linear embedder and 60 labelled inputs (5 classes, 12 each)."""
    torch.manual_seed(seed)
    inputs = torch.randn(60, 12)
    labels = torch.arange(60) % 5
    return (
        torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8)),
        inputs,
        labels,
    )
