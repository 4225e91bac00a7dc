"""What the driver constructing a worker group calls on its workers: the audit's verdicts.

The driver is found from the call stack (the nearest frame, within the user's NeMo-RL
tree and outside `nemo_rl.distributed`, whose `self` is an instance of a class the tree
defines: `Policy`, `VllmGeneration`, a fork's own). The tree is read once per process
with the audit's model (`read_tree`, `DriverReader`: source only, nothing imported), the
folder the class was found in read with it, and the audit's call rules (`rules.check`)
judge the class against every call the driver makes on its workers by name.

A call is held against the class only where the verdict is the class's own: calls the
driver makes unconditionally (a call made only under some switch, such as a quantized
worker's, may never be made on this run), rules of severity error, and only what the
tree's own classes of that driver pass (upstream's own gaps are the audit's business,
not a reason to refuse a run). What the model cannot find (the class outside the folders
read) is undecided: it passes.
"""

from __future__ import annotations

import functools
import os
import types
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.rules import Finding
    from nemo_rl_workers.tree.drivers import Dispatch, Driver, DriverSide, WorkerChoice
    from nemo_rl_workers.tree.source import Resolver, SourceTree

PACKAGE = "nemo_rl"
SHOWN = 3  # methods named in the sentence; the rest are counted


@dataclass(frozen=True)
class DriverFrame:
    name: str  # the driver class's name, as the audit names drivers ("Policy")
    where: str  # file:line of the group's construction in the driver


def driver_on_stack(frame: types.FrameType | None, own_root: str) -> DriverFrame | None:
    """The nearest frame of a tree driver's method, past the worker groups' own."""
    skipped = os.path.join(own_root, "distributed") + os.sep
    while frame is not None:
        file = os.path.realpath(frame.f_code.co_filename)
        if file.startswith(own_root + os.sep) and not file.startswith(skipped):
            qualname = frame.f_code.co_qualname  # "Policy.__init__": the class that wrote it
            if "self" in frame.f_locals and "." in qualname and "<" not in qualname:
                return DriverFrame(qualname.split(".")[0], f"{file}:{frame.f_lineno}")
        frame = frame.f_back
    return None


@dataclass
class _Side:
    tree: SourceTree
    resolver: Resolver
    side: DriverSide
    choices: dict[str, tuple[Driver | None, list[WorkerChoice]]]


@functools.cache
def _read(root: str, extra: tuple[str, ...]) -> _Side:
    from nemo_rl_workers.tree.drivers import DriverReader
    from nemo_rl_workers.tree.knowledge import driver_side
    from nemo_rl_workers.tree.source import Resolver, read_tree

    tree = read_tree(Path(root), packages=[PACKAGE], stub_roots=[Path(e) for e in extra],
                     eager=driver_side)
    resolver = Resolver(tree)
    reader = DriverReader(tree, resolver)
    side = reader.read()
    owners = {d.name for d in side.drivers.values()} | {d.owner for d in side.dispatches}
    return _Side(tree, resolver, side, {name: reader.choices_of(name) for name in owners})


def _class_folder(fqn: str) -> str | None:
    """The import root the class's module is found in, when it is a small folder of the
    user's own (never site-packages: the model reads every module of a folder it is given)."""
    from nemo_rl_workers.tree.source import ImportRoots, locate

    found = locate(fqn.rpartition(".")[0], ImportRoots.of_this_interpreter())
    if isinstance(found, str):
        return None
    root = str(found.root)
    if "site-packages" in root or "dist-packages" in root:
        return None
    return root


def calls_of(driver: DriverFrame, own_root: str) -> list[tuple[str, int, tuple[str, ...] | None]]:
    """What `driver` always calls on its workers: (method, positional, keywords or None
    where some come from an unknown mapping), once each."""
    side = _read(str(Path(own_root).parent), ())
    out: dict[tuple[str, int, tuple[str, ...] | None], None] = {}
    for d in side.side.dispatches:
        if d.owner == driver.name and d.worker is None and not d.condition:
            keywords = None if d.open_keywords else tuple(sorted(d.keywords))
            out[(d.method, d.positional, keywords)] = None
    return list(out)


def missing_calls(fqn: str, driver: DriverFrame, own_root: str) -> list[Finding]:
    """The audit's error findings for `fqn` on what `driver` always calls, less those the
    tree's own classes of that driver have too."""
    from nemo_rl_workers.checks.audit.rules import check
    from nemo_rl_workers.tree.drivers import WorkerChoice

    tree_root = str(Path(own_root).parent)
    folder = _class_folder(fqn)
    extra = (folder,) if folder is not None and folder != tree_root else ()
    side = _read(tree_root, extra)
    dispatches: list[Dispatch] = [d for d in side.side.dispatches
                                  if d.owner == driver.name and d.worker is None]
    if not dispatches:
        return []
    driver_obj, own = side.choices.get(driver.name, (None, []))
    choice = WorkerChoice(fqn, frozenset(), driver.where)
    found, _ = check(side.tree, side.resolver, dispatches, {driver.name: (driver_obj, [choice])})
    theirs, _ = check(side.tree, side.resolver, dispatches, {driver.name: (driver_obj, own)})
    known = {(f.rule, f.method, f.call) for f in theirs}
    return [f for f in found if f.severity == "error" and not f.condition
            and (f.rule, f.method, f.call) not in known]


def sentence_of(findings: list[Finding], driver: DriverFrame) -> str:
    """'lacks what the driver Policy calls on its workers: train (file:line), ...'."""
    methods: dict[str, str] = {}
    for f in findings:
        methods.setdefault(f.method, f.call)
    shown = [f"{m} ({where})" for m, where in list(methods.items())[:SHOWN]]
    more = len(methods) - SHOWN
    listed = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    rules = sorted({f.rule for f in findings})
    return (f"cannot serve what the driver {driver.name} calls on its workers "
            f"({len(methods)} method(s): {listed}; audit rule(s) {', '.join(rules)})")

