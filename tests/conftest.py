"""Settings for the whole suite, which runs on every core (pytest-xdist, ``--dist loadgroup``).

- torchvision is importable in every pytest process: xdist's controller rebuilds the
  warnings its workers report, and a warning class from lightning imports torchmetrics →
  torchvision, which dies on this CPU-only torch unless ``tv_compat`` ran first.
- A session fixture that starts daemons is started once per xdist worker that asks for
  it, so the tests sharing one are kept on one worker.
- A module-scoped fixture is likewise built once per worker that runs a test reading it
  (loadgroup hands ungrouped tests out one by one, to whichever worker is free), so the
  tests of a module that read one are kept on one worker too.
- pytest-xdist 3.8 tells its controller a test's group by appending ``@group`` to the
  test's node id on the worker, which pytest 9.2's structured node ids ignore
  (pytest-xdist#1386): every group was silently split, each worker starting its own
  SLURM cluster and stack. ``_keep_groups`` sets the suffix where it did not take.
- Units of work are handed out longest first (the LPT rule), by the seconds each test
  took in a recorded full run (``durations.json``; ``--record-durations`` rewrites it):
  a unit of 2 minutes handed out last ends the run on one worker while the other idles.
  The daemon groups go first whatever their time, so they never start late. A test not
  in the file counts as ``UNKNOWN_SECONDS``.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

import sphere_engine.tv_compat  # noqa: F401

# fixture name → the xdist group of every test that uses it (in the order they start)
DAEMON_FIXTURE_GROUPS = {"slurm": "slurm-cluster", "shared_stack": "shared-stack"}
#: seconds (setup + call + teardown) per test id, without xdist's ``@group`` suffix
DURATIONS = Path(__file__).with_name("durations.json")
UNKNOWN_SECONDS = 1.0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help=f"write each test's seconds to {DURATIONS.name} (the order units are handed out)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # the groups are set without xdist too (``-p no:xdist``), where nothing declares them
    config.addinivalue_line("markers", "xdist_group(name): tests kept on one xdist worker")
    # xdist hands units of work out in the order of the collection (ordered below);
    # its own reorder, largest group first, would put a module of many quick tests
    # ahead of the daemon groups
    config.option.loadscopereorder = False
    config.pluginmanager.register(KeepGroups(), "keep-xdist-groups")
    if config.getoption("record_durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(RecordDurations(), "record-durations")


def _has_group_suffix(nodeid: str) -> bool:
    """Whether ``nodeid`` ends in xdist's ``@group`` (xdist's own test for a group)."""
    return nodeid.rfind("@") > nodeid.rfind("]")


def _plain_id(nodeid: str) -> str:
    """``nodeid`` without the ``@group`` suffix xdist gives a grouped test."""
    return nodeid[: nodeid.rfind("@")] if _has_group_suffix(nodeid) else nodeid


class RecordDurations:
    """Each test's seconds, summed over its phases, written at the end of a run (by
    the controller, which receives every worker's reports)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[_plain_id(report.nodeid)] += report.duration

    def pytest_sessionfinish(self) -> None:
        rounded = {test: round(s, 2) for test, s in sorted(self.seconds.items())}
        DURATIONS.write_text(json.dumps(rounded, indent=0) + "\n")


def _module_fixture_group(item: pytest.Item) -> str | None:
    """The group of ``item``'s module when it reads a module-scoped fixture."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name, ())
        if definitions and definitions[-1].scope == "module":
            return f"module:{item.nodeid.split('::', 1)[0]}"
    return None


def _keep_groups(items: list[pytest.Item]) -> None:
    """Give each grouped test the node id ``id@group`` xdist meant it to have (its
    groups joined as xdist joins them), when xdist's own rename did not take."""
    for item in items:
        names = {
            str(m.args[0] if m.args else m.kwargs["name"]) for m in item.iter_markers("xdist_group")
        }
        nodeid = item.nodeid
        if names and not _has_group_suffix(nodeid):
            identity = item._id  # pytest ≥ 9.2: parse keeps the string as given
            item._id = type(identity).parse(f"{nodeid}@{'_'.join(sorted(names))}")


class KeepGroups:
    """``_keep_groups`` after xdist's own rename."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if getattr(config.option, "loadgroup", False):  # an xdist worker under loadgroup
            _keep_groups(items)


def _group(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("xdist_group")
    return None if marker is None else str(marker.args[0] if marker.args else marker.kwargs["name"])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, group in DAEMON_FIXTURE_GROUPS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(group))
        # xdist joins a test's group names into one: a daemon group is left alone
        if _group(item) is None:
            group = _module_fixture_group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
    # daemon groups first (in their order), then every other unit of work (a group, or
    # a test of none) longest first; a stable sort keeps each group's own order
    expected = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    seconds: dict[str, float] = collections.defaultdict(float)
    for item in items:
        seconds[_unit(item)] += expected.get(_plain_id(item.nodeid), UNKNOWN_SECONDS)
    daemons = list(DAEMON_FIXTURE_GROUPS.values())

    def rank(item: pytest.Item) -> tuple[int, float]:
        group = _group(item)
        if group in daemons:
            return 0, daemons.index(group)
        return 1, -seconds[_unit(item)]

    items.sort(key=rank)


def _unit(item: pytest.Item) -> str:
    """What xdist hands out whole: the test's group, or the test alone."""
    return _group(item) or item.nodeid
