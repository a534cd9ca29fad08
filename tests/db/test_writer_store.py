"""``db.writer_store``: ``RunStore`` and ``RemoteStore`` (and their trackers) satisfy the
protocols member by member, signatures included (a structural check: no type checker
runs here), and the check itself catches a missing member or a parameter a caller
could not pass."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Protocol

import pytest

from db.remote.store import RemoteStore
from db.remote.tracker import RemoteTracker
from db.store import RunStore
from db.tracker import StoreTracker
from db.writer_store import WriterStore, WriterTracker

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)


def protocol_members(protocol: type) -> tuple[dict[str, Any], set[str]]:
    """(methods by name, data attributes) a protocol declares, its bases included."""
    methods: dict[str, Any] = {}
    attributes: set[str] = set()
    for cls in reversed(protocol.__mro__):
        if cls in (object, Protocol) or not getattr(cls, "_is_protocol", False):
            continue
        attributes |= set(inspect.get_annotations(cls))
        methods |= {
            name: value
            for name, value in vars(cls).items()
            if callable(value) and not name.startswith("_")
        }
    return methods, attributes


def mismatches(cls: type, protocol: type, instance: object | None = None) -> list[str]:
    """How ``cls`` fails ``protocol``: a missing member, or a call the protocol allows
    that the class's method would refuse."""
    methods, attributes = protocol_members(protocol)
    problems = [
        f"no attribute {name}"
        for name in sorted(attributes)
        if not hasattr(instance if instance is not None else cls, name)
    ]
    for name, declared in sorted(methods.items()):
        actual = getattr(cls, name, None)
        if not callable(actual):
            problems.append(f"no method {name}")
            continue
        problems += [f"{name}: {p}" for p in _call_mismatches(declared, actual)]
    return problems


def _call_mismatches(declared: Any, actual: Any) -> list[str]:
    want = list(inspect.signature(declared).parameters.values())[1:]  # after self
    have = list(inspect.signature(actual).parameters.values())[1:]
    by_name = {p.name: p for p in have}
    kinds = {p.kind for p in have}
    problems = []
    positional = [p for p in have if p.kind in POSITIONAL]
    for index, param in enumerate(want):
        if param.kind in POSITIONAL:
            match = positional[index] if index < len(positional) else None
            if match is None and P.VAR_POSITIONAL not in kinds:
                problems.append(f"takes no positional parameter {param.name}")
            elif match is not None and match.name != param.name:
                problems.append(f"parameter {index + 1} is {match.name}, not {param.name}")
            elif match is not None and param.default is not P.empty and match.default is P.empty:
                problems.append(f"{param.name} has no default")
        elif param.kind is P.KEYWORD_ONLY:
            match = by_name.get(param.name)
            if match is None and P.VAR_KEYWORD not in kinds:
                problems.append(f"takes no keyword {param.name}")
            elif match is not None and match.kind not in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD):
                problems.append(f"{param.name} cannot be passed by keyword")
            elif match is not None and param.default is not P.empty and match.default is P.empty:
                problems.append(f"{param.name} has no default")
        elif param.kind not in kinds:
            problems.append(f"takes no {param.kind.description} (**{param.name})")
    declared_names = {p.name for p in want}
    for param in have:  # what the class needs beyond the protocol must have a default
        required = param.default is P.empty and param.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)
        if required and param.name not in declared_names:
            problems.append(f"requires {param.name}, which the protocol does not pass")
    return problems


def test_both_stores_satisfy_the_writer_store_protocol(tmp_path: Path) -> None:
    local = RunStore(tmp_path / "home")
    remote = RemoteStore("http://127.0.0.1:9", "token", tmp_path / "elsewhere")
    methods, attributes = protocol_members(WriterStore)
    assert {"create_run", "end_run", "tracker", "cancel_requested"} <= set(methods)
    assert attributes == {"home"}
    for store in (local, remote):
        assert isinstance(store, WriterStore)
        assert mismatches(type(store), WriterStore, store) == [], type(store).__name__


def test_both_trackers_satisfy_the_writer_tracker_protocol(tmp_path: Path) -> None:
    methods, _ = protocol_members(WriterTracker)
    assert {"track_many", "track_query_results", "flush", "buffered_rows"} <= set(methods)
    local = RunStore(tmp_path / "home")
    run_id = local.create_run({}, "r", status="running")
    remote = RemoteStore("http://127.0.0.1:9", "token", tmp_path / "elsewhere")
    for tracker in (local.tracker(run_id), remote.tracker(run_id)):
        assert isinstance(tracker, WriterTracker)
    for cls in (StoreTracker, RemoteTracker):
        assert mismatches(cls, WriterTracker) == [], cls.__name__


class _Partial:
    home = Path(".")

    def run_dir(self, run_id: str, create: bool) -> Path:  # a parameter callers never pass
        return self.home

    def create_run(self, config, label=None, *, kind: str = "train") -> str:
        return ""

    def end_run(self, run_id: str, status: str, message: str = "") -> None:  # no **fields
        pass


@pytest.mark.parametrize(
    "problem",
    [
        "no method get_run",
        "run_dir: requires create, which the protocol does not pass",
        "create_run: parameter 2 is label, not name",
        "create_run: takes no keyword status",
        "end_run: takes no variadic keyword (**fields)",
    ],
)
def test_the_check_names_what_a_class_lacks(problem: str) -> None:
    assert problem in mismatches(_Partial, WriterStore)
    assert not isinstance(_Partial(), WriterStore)
