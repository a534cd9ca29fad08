"""docs/architecture.md is the map of the code: every module path it names exists, and
it stays short (contracts and the map, not signatures)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("app", "db", "worker", "sphere_engine", "spherescope", "tests", "bench", "docs")
# a path (`app/views/run.py`, `sphere_engine/models/`) or a dotted name (`db.queries`)
_ALTERNATIVES = "|".join(PACKAGES)
_NAMED = re.compile(r"`((?:" + _ALTERNATIVES + r")[/.][A-Za-z0-9_./<>-]*)")


def _top_level_names(module: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def _exists(named: str) -> bool:
    if "<" in named:  # a pattern such as `app/views/<page>.py`: its folder must exist
        return (ROOT / named.split("<", 1)[0]).parent.is_dir()
    if "/" in named:
        return (ROOT / named.rstrip("/")).exists()
    parts = named.rstrip(".").split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        module = base.with_suffix(".py")
        if not module.is_file() and (base / "__init__.py").is_file():
            module = base / "__init__.py"
        if module.is_file():
            rest = parts[cut:]
            # at most one attribute after the module, defined (or imported) there
            return not rest or (len(rest) == 1 and rest[0] in _top_level_names(module))
    return False


def test_every_module_path_named_exists() -> None:
    named = sorted(set(_NAMED.findall(DOC.read_text(encoding="utf-8"))))
    assert len(named) > 40  # the pattern finds the map
    missing = [name for name in named if not _exists(name)]
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"


def test_a_path_that_does_not_exist_is_caught() -> None:
    assert _exists("db.queries.final_metrics") and _exists("sphere_engine/training/")
    assert not _exists("worker.lifecycle") and not _exists("db.queries.no_such_function")
    assert not _exists("sphere_engine/evaluation.py")


def test_it_stays_a_map() -> None:
    assert len(DOC.read_text(encoding="utf-8").splitlines()) <= 250
