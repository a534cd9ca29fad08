"""A module whose import takes ``DEAR_IMPORT_S`` of CPU: stands in for a heavy import
(torch's, the findings' rules with pandas and DuckDB) in tests of what a coordinator
counts as its cost."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import time
from typing import Any

import pytest

DEAR_IMPORT_S = 0.2


class DearImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``name`` as a module holding ``attributes``, after ``DEAR_IMPORT_S`` of CPU."""

    def __init__(self, name: str, **attributes: Any) -> None:
        self.name, self.attributes = name, attributes

    def find_spec(self, fullname, path, target=None):
        return importlib.machinery.ModuleSpec(fullname, self) if fullname == self.name else None

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        started = time.process_time()
        while time.process_time() - started < DEAR_IMPORT_S:
            pass
        for key, value in self.attributes.items():
            setattr(module, key, value)


def make_import_dear(monkeypatch: pytest.MonkeyPatch, name: str, **attributes: Any) -> None:
    """The next ``import name`` (forgotten if imported before) is a dear one."""
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "meta_path", [DearImport(name, **attributes), *sys.meta_path])
