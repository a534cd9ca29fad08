"""Dependencies point one way, checked over EVERY import of the code: module level,
inside functions and under ``TYPE_CHECKING`` alike (parsed with ``ast``, nothing is
imported), because the imports that ran back up hid inside functions.

- ``sphere_engine`` is layered (``ENGINE_LAYERS``): no import goes to a higher layer,
  its packages import each other without a circle, ``sphere_engine/config/`` imports
  nothing of the engine but ``catalogue``, and nothing in it imports ``app``, ``db``,
  ``worker`` or ``spherescope``.
- ``TORCH_FREE`` engine packages reach no torch (nor faiss, timm, ...) through any chain
  of imports; ``db`` imports no torch and no streamlit and, of the engine, only those.
- ``app`` takes from the engine only the torch-free packages and the doors in
  ``APP_TORCH_DOORS`` (which load torch when called, never on import): importing any
  ``app`` module loads no torch.
- No import circle among the modules of ``db``, ``sphere_engine/config`` or
  ``sphere_engine/validation``.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "db", "worker", "sphere_engine", "spherescope")
#: Libraries that need (or are) the deep-learning stack.
TORCH = frozenset({"torch", "torchvision", "faiss", "timm", "transformers", "lightning"})

#: The engine's layers, lowest first: a package imports its own layer or lower ones.
ENGINE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "catalogue", "geometry", "tracking", "job_rank"),  # facts, maths, protocols
    ("config",),  # the run config's plain declarations
    ("registry", "experiments", "findings"),  # declared over the config
    (  # the components (torch)
        "tv_compat",
        "distributed",
        "diagnostics",
        "data",
        "models",
        "heads",
        "losses",
        "regularizers",
        "metrics",
        "robustness",
        "optim",
        "parallel",
    ),
    ("objective_parts", "objective"),  # the objective's parts built from a config
    ("validation",),  # a config checked against the components
    ("evaluation", "training", "train", "export"),  # a run, and its model taken out
)
#: Engine packages no chain of imports leads from to torch (checked below).
TORCH_FREE = frozenset(
    {
        "errors",
        "catalogue",
        "geometry",
        "tracking",
        "job_rank",
        "config",
        "registry",
        "experiments",
        "findings",
    }
)
#: Engine packages the dashboard may call into although they load torch when called:
#: each is imported where it is used and is cheap to import (checked below).
APP_TORCH_DOORS = {
    "validation": "the Launch form lists the registered components and checks the config",
    "heads": "the Geometry page draws a fixed head's polytope vertices",
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # a module of the code (dotted), or an outside package's top-level name
    line: int
    on_import: bool  # runs when ``source`` is imported (not in a function, not TYPE_CHECKING)

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, name: str, is_package: bool) -> None:
        self.name, self.is_package = name, is_package
        self.deferred = 0  # depth of functions and TYPE_CHECKING blocks around the node
        self.found: list[Import] = []

    def _add(self, target: str, line: int) -> None:
        known = modules()
        if target not in known:
            target = target.split(".")[0]
        self.found.append(Import(self.name, target, line, on_import=not self.deferred))

    def _deferred(self, node: ast.AST) -> None:
        self.deferred += 1
        self.generic_visit(node)
        self.deferred -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _deferred

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        self.deferred += 1
        for child in node.body:
            self.visit(child)
        self.deferred -= 1
        for child in node.orelse:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:  # relative: from the importing module's package
            base = self.name.split(".")
            base = base if self.is_package else base[:-1]
            base = base[: len(base) - (node.level - 1)]
            module = ".".join([*base, module] if module else base)
        # ``from package import module`` imports the module; other names come from ``module``
        submodules = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in modules()]
        for target in submodules:
            self._add(target, node.lineno)
        if len(submodules) < len(node.names):
            self._add(module, node.lineno)


@functools.cache
def imports() -> tuple[Import, ...]:
    found: list[Import] = []
    for name, path in modules().items():
        collector = _Collector(name, path.name == "__init__.py")
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        found.extend(collector.found)
    return tuple(found)


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def _engine_package(module: str) -> str | None:
    """``sphere_engine.config.fields`` → ``config``; None outside the engine."""
    parts = module.split(".")
    return parts[1] if parts[0] == "sphere_engine" and len(parts) > 1 else None


def _reached(start: str, *, on_import_only: bool) -> dict[str, list[str]]:
    """Every module (or outside package) reachable from ``start``, with one chain to it.
    Importing ``a.b.c`` runs ``a`` and ``a.b`` first, so those are reached too."""
    by_source: dict[str, list[Import]] = {}
    for edge in imports():
        if edge.on_import or not on_import_only:
            by_source.setdefault(edge.source, []).append(edge)
    chains = {start: [start]}
    waiting = [start]
    while waiting:
        current = waiting.pop()
        for edge in by_source.get(current, []):
            parts = edge.target.split(".")
            for cut in range(1, len(parts) + 1):
                target = ".".join(parts[:cut])
                if target not in chains:
                    chains[target] = [*chains[current], str(edge)]
                    waiting.append(target)
    return chains


def _cycles(nodes: Iterable[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return found


# ----------------------------------------------------------------------------- the parser


def test_the_parser_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    source = """
import torch
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from db.store import RunStore
else:
    import numpy
def build():
    from sphere_engine import objective_parts
class Late:
    from . import geometry
"""
    collector = _Collector("sphere_engine.example", is_package=False)
    collector.visit(ast.parse(source))
    assert [(i.target, i.on_import) for i in collector.found] == [
        ("torch", True),
        ("typing", True),
        ("db.store", False),
        ("numpy", True),
        ("sphere_engine.objective_parts", False),
        ("sphere_engine.geometry", True),
    ]
    chain = _reached("sphere_engine.validation", on_import_only=False)
    assert "torch" in chain and "sphere_engine.objective_parts" in chain
    assert "torch" not in _reached("sphere_engine.validation", on_import_only=True)


def test_a_circle_is_found() -> None:
    assert _cycles("abc", {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert _cycles("abc", {"a": {"b"}, "b": {"c"}}) == []


# ----------------------------------------------------------------------------- the engine


def test_every_engine_package_has_a_layer() -> None:
    layered = {package for layer in ENGINE_LAYERS for package in layer}
    packages = {_engine_package(m) for m in modules()} - {None}
    assert packages == layered, f"place these in ENGINE_LAYERS: {packages ^ layered}"
    assert layered >= TORCH_FREE and set(APP_TORCH_DOORS) <= layered


def test_no_import_runs_back_up_inside_the_engine() -> None:
    layer = {package: n for n, packages in enumerate(ENGINE_LAYERS) for package in packages}
    upward = [
        str(edge)
        for edge in imports()
        if (source := _engine_package(edge.source))
        and (target := _engine_package(edge.target))
        and layer[target] > layer[source]
    ]
    assert not upward, "imports that run back up:\n" + "\n".join(upward)


def test_the_engine_packages_import_each_other_without_a_circle() -> None:
    edges: dict[str, set[str]] = {}
    for edge in imports():
        source, target = _engine_package(edge.source), _engine_package(edge.target)
        if source and target and source != target:
            edges.setdefault(source, set()).add(target)
    assert _cycles(edges, edges) == []


def test_the_config_is_plain_declarations() -> None:
    outside = [
        str(edge)
        for edge in imports()
        if _in(edge.source, "sphere_engine.config")
        and (
            edge.target.split(".")[0] in (*PACKAGES, *TORCH)
            and not _in(edge.target, "sphere_engine.config")
            and not _in(edge.target, "sphere_engine.catalogue")
        )
    ]
    assert not outside, "\n".join(outside)


def test_the_engine_imports_none_of_the_other_packages() -> None:
    others = ("app", "db", "worker", "spherescope")
    wrong = [
        str(edge)
        for edge in imports()
        if _in(edge.source, "sphere_engine") and edge.target.split(".")[0] in others
    ]
    assert not wrong, "\n".join(wrong)


def test_the_torch_free_engine_packages_reach_no_torch() -> None:
    reaching = {}
    for module in modules():
        if _engine_package(module) in TORCH_FREE:
            chains = _reached(module, on_import_only=False)
            for library in TORCH & chains.keys():
                reaching[f"{module} → {library}"] = " → ".join(chains[library][1:])
    assert not reaching, "\n".join(f"{k}: {v}" for k, v in reaching.items())


# ----------------------------------------------------------------------------- db, app


def test_db_imports_no_torch_no_streamlit_and_only_torch_free_engine_packages() -> None:
    wrong = [
        str(edge)
        for edge in imports()
        if _in(edge.source, "db")
        and (
            edge.target.split(".")[0] in (*TORCH, "streamlit", "app", "worker", "spherescope")
            or (
                _in(edge.target, "sphere_engine") and _engine_package(edge.target) not in TORCH_FREE
            )
        )
    ]
    assert not wrong, "\n".join(wrong)


def test_the_app_takes_only_torch_free_engine_packages_and_the_declared_doors() -> None:
    allowed = TORCH_FREE | set(APP_TORCH_DOORS)
    wrong = [
        str(edge)
        for edge in imports()
        if _in(edge.source, "app")
        and (
            edge.target.split(".")[0] in TORCH
            or (_in(edge.target, "sphere_engine") and _engine_package(edge.target) not in allowed)
        )
    ]
    assert not wrong, "\n".join(wrong)


def test_importing_any_app_module_loads_no_torch() -> None:
    loading = {}
    for module in modules():
        if _in(module, "app"):
            chains = _reached(module, on_import_only=True)
            for library in TORCH & chains.keys():
                loading[f"{module} → {library}"] = " → ".join(chains[library][1:])
    assert not loading, "\n".join(f"{k}: {v}" for k, v in loading.items())


def test_no_import_circle_in_db_config_or_validation() -> None:
    for package in ("db", "sphere_engine.config", "sphere_engine.validation"):
        edges: dict[str, set[str]] = {}
        for edge in imports():
            inside = _in(edge.source, package) and _in(edge.target, package)
            if inside and edge.source != edge.target:
                edges.setdefault(edge.source, set()).add(edge.target)
        members = [m for m in modules() if _in(m, package)]
        assert _cycles(members, edges) == [], f"import circle in {package}"
