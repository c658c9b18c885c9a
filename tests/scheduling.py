"""How the suite shares the cores (pytest-xdist, ``-n auto --dist loadgroup`` in pyproject.toml).

* The tests reading one expensive fixture (:data:`SHARED`) run in one test process, as one unit,
  so the fixture is built once; so do the tests of a module reading one of its module-scoped
  fixtures. Every other test is a unit of its own, handed to whichever process is free.
* The units start longest first: those of :data:`FIRST` in its order, then those holding a
  ``slow`` test, then the rest, each in the order collected; so the processes end together.

pytest-xdist's ``loadgroup`` scheduler reads a test's group from a suffix it adds to the test's id
(the ``xdist_group`` mark), which pytest 9.2 no longer lets a plugin change (pytest-xdist issue
1386: the groups are silently ignored). So each test process also writes the groups it collected
to a file of a folder the controlling process made, and the scheduler reads them there; where the
suffix is set, it is used as before.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: expensive fixtures read by several tests: ``{fixture: the group of the tests using it}``
SHARED = {"built_book": "main-book", "wheel": "wheel"}
#: the units that start first, in this order: the main book's build and the tests reading it, the
#: installed wheel's builds, then the replay of the book's claims (a group of its own, marked in
#: test_report, so it runs in another process than the rest of the book's tests: the book is built
#: once per run, conftest's ``built_book``)
FIRST = ("main-book", "wheel", "main-book-claims")

#: the key of the groups' folder in what the controlling process sends each test process
FOLDER_KEY = "recmetrics_groups"


def group_of(item: pytest.Item) -> str | None:
    """The group of a test: that of its ``xdist_group`` mark, else that of the first :data:`SHARED`
    fixture it reads, else its module's when it reads a fixture of module scope, else none."""
    marked = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                     for m in item.iter_markers("xdist_group")})
    if marked:
        return "_".join(marked)         # as pytest-xdist joins them
    for name, group in SHARED.items():
        if name in item.fixturenames:
            return group
    for defs in item._fixtureinfo.name2fixturedefs.values():
        if defs and defs[-1].scope == "module":
            return item.nodeid.split("::")[0]
    return None


def _rank(unit: str, items: list) -> int:
    if unit in FIRST:
        return FIRST.index(unit)
    return len(FIRST) + (not any(item.get_closest_marker("slow") for item in items))


def _read_groups(folder: Path) -> dict[str, str]:
    groups: dict[str, str] = {}
    for path in sorted(folder.glob("*.json")):
        groups.update(json.loads(path.read_text(encoding="utf-8")))
    return groups


class Scheduling:
    """The plugin (registered by conftest.py); its xdist hooks are optional, so the suite also runs
    without pytest-xdist, in one process."""

    def __init__(self) -> None:
        self.folder: Path | None = None      # the controlling process's folder of groups

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        units: dict[str, list] = {}
        groups: dict[str, str] = {}
        for item in items:
            group = group_of(item)
            if group:
                groups[item.nodeid] = group
                if config.pluginmanager.hasplugin("xdist") and not item.get_closest_marker("xdist_group"):
                    item.add_marker(pytest.mark.xdist_group(group))
            units.setdefault(group or item.nodeid, []).append(item)
        order = sorted(units, key=lambda unit: _rank(unit, units[unit]))     # stable
        items[:] = [item for unit in order for item in units[unit]]
        folder = getattr(config, "workerinput", {}).get(FOLDER_KEY)
        if folder:                           # a test process: tell the scheduler the groups
            path = Path(folder) / f"{config.workerinput['workerid']}.json"
            part = path.with_suffix(".part")
            part.write_text(json.dumps(groups), encoding="utf-8")
            os.replace(part, path)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="recmetrics-test-groups-"))
        node.workerinput[FOLDER_KEY] = str(self.folder)

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadGroupScheduling

        plugin = self

        class GroupsFromFiles(LoadGroupScheduling):
            """``loadgroup`` reading the groups the test processes wrote (read once every process
            has collected: the scheduler first asks when it distributes the tests)."""

            groups: dict[str, str] | None = None

            def _split_scope(self, nodeid: str) -> str:
                if self.groups is None:
                    self.groups = _read_groups(plugin.folder) if plugin.folder else {}
                return self.groups.get(nodeid) or super()._split_scope(nodeid)

        return GroupsFromFiles(config, log)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
