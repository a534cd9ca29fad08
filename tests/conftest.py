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
- The daemon groups are the longest units of work: they are handed out first, so they
  never start late and end the run alone on one worker.
"""

from __future__ import annotations

import collections

import pytest

import sphere_engine.tv_compat  # noqa: F401

# fixture name → the xdist group of every test that uses it (in the order they start)
DAEMON_FIXTURE_GROUPS = {"slurm": "slurm-cluster", "shared_stack": "shared-stack"}


def pytest_configure(config: pytest.Config) -> None:
    # the groups are set without xdist too (``-p no:xdist``), where nothing declares them
    config.addinivalue_line("markers", "xdist_group(name): tests kept on one xdist worker")
    # xdist hands units of work out in the order of the collection (ordered below);
    # its own reorder, largest group first, would put a module of many quick tests
    # ahead of the daemon groups
    config.option.loadscopereorder = False
    config.pluginmanager.register(KeepGroups(), "keep-xdist-groups")


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
        if names and nodeid.rfind("@") <= nodeid.rfind("]"):  # xdist's own test for a group
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
    # daemon groups first (in their order), then the other groups, largest first, then
    # single tests as collected (a stable sort keeps each group's and module's order)
    sizes = collections.Counter(_group(item) for item in items)
    daemons = list(DAEMON_FIXTURE_GROUPS.values())

    def rank(item: pytest.Item) -> tuple[int, int]:
        group = _group(item)
        if group in daemons:
            return 0, daemons.index(group)
        return (1, -sizes[group]) if group is not None else (2, 0)

    items.sort(key=rank)
