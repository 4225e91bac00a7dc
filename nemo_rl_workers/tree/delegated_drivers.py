"""Drivers that start their workers through a class they build.

A class whose name gives it a role (a `...Generation` backend, a `DRIVER_ROLES` name) may
start no worker itself and build, directly or through a few classes, one that does:
upstream's Dynamo backend builds a runtime that builds a worker pool, and the pool calls
`<ActorClass>.options(...).remote(...)`. The role's class then starts the pool's workers.
Of what the pool starts, the classes the tree registers with an actor environment are its
workers; an unregistered actor it starts beside them (a GPU reservation, which runs in the
workers' environment) is not a worker of the section. Read from the source model
(modules parsed when the walk first needs them), nothing imported.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from nemo_rl_workers.tree.drivers import Driver, DriverReader
from nemo_rl_workers.tree.entry_builds import entry_modules
from nemo_rl_workers.tree.knowledge import DRIVER_ROLES, GENERATION_DRIVER_SUFFIX
from nemo_rl_workers.tree.source import CallSite, ClassInfo

MAX_DEPTH = 4
"""Classes between the role's class and the one that starts workers (Dynamo needs 2)."""


@dataclass(frozen=True)
class Delegation:
    """A role's class, the driver it builds, and the builds between (`file:line` each)."""

    driver: Driver
    through: tuple[tuple[str, str], ...]  # (class built, where it is built), in order


def delegated_drivers(reader: DriverReader) -> list[Delegation]:
    """Every class with a role, built somewhere in the tree, that is no driver itself and
    builds one that starts workers: a driver of those workers (the registered ones)."""
    calls = _CallsByClass(reader)
    out: list[Delegation] = []
    seen: set[str] = set()
    for info in _role_classes(reader):
        if info.fqn in seen or info.fqn in reader.side.drivers:
            continue
        seen.add(info.fqn)
        found = _builds_a_driver(reader, calls, info)
        if found is not None:
            out.append(found)
    return out


def _role_classes(reader: DriverReader) -> Iterator[ClassInfo]:
    """Classes with a role that the tree's modelled code constructs (its entries' `setup`
    modules modelled first: they build the drivers)."""
    entry_modules(reader.tree)
    for call in list(reader.tree.calls):
        func = call.node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else "")
        if not (name.endswith(GENERATION_DRIVER_SUFFIX) or name in DRIVER_ROLES):
            continue
        info = reader.class_called(call)
        if info is not None and info.name == name:
            yield info


def _builds_a_driver(reader: DriverReader, calls: _CallsByClass,
                     start: ClassInfo) -> Delegation | None:
    """Breadth first through the classes `start` builds, to the nearest that starts
    workers; None if none within MAX_DEPTH."""
    queue: deque[tuple[ClassInfo, tuple[tuple[str, str], ...]]] = deque([(start, ())])
    visited = {start.fqn}
    while queue:
        info, through = queue.popleft()
        if len(through) >= MAX_DEPTH:
            continue
        for call in calls.of(info):
            built = reader.class_called(call)
            if built is None or built.fqn in visited:
                continue
            visited.add(built.fqn)
            path = (*through, (built.name, call.where))
            driver = reader.side.drivers.get(built.fqn)
            if driver is not None and driver.choices:
                return Delegation(_as_role_driver(reader, start, driver), path)
            queue.append((built, path))
    return None


def _as_role_driver(reader: DriverReader, role: ClassInfo, driver: Driver) -> Driver:
    registered = {*reader.side.environments, *reader.side.py_executables}
    choices = [c for c in driver.choices if c.fqn in registered] or driver.choices
    return Driver(role.name, role.fqn, role.where, choices)


class _CallsByClass:
    """The calls written in a class's body and methods, by class; modules the walk parses
    add their calls to the tree's list, indexed when next asked."""

    def __init__(self, reader: DriverReader) -> None:
        self._tree = reader.tree
        self._indexed = 0
        self._by_class: dict[tuple[str, str], list[CallSite]] = {}

    def of(self, info: ClassInfo) -> list[CallSite]:
        self._tree.module(info.module)
        calls = self._tree.calls
        for call in calls[self._indexed:]:
            if call.cls is not None:
                self._by_class.setdefault((call.module, call.cls), []).append(call)
        self._indexed = len(calls)
        return self._by_class.get((info.module, info.qualname), [])
