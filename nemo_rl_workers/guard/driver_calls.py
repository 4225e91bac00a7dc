"""What the driver constructing a worker group calls on its workers: the audit's verdicts.

The driver is found from the call stack (the nearest frame, within the user's NeMo-RL
tree and outside `nemo_rl.distributed`, whose `self` is an instance of a class the tree
defines: `Policy`, `VllmGeneration`, a fork's own). What each driver calls on its workers
by name, and what the tree's own classes of it fail, is the tree's cached model
(`driver_model`: read from source once, then from the content cache); the class is
modelled on demand from its own folder (`class_model`) and judged by the audit's call
rules (`rules.check`).

A call is held against the class only where the verdict is the class's own: calls the
driver makes unconditionally (a call made only under some switch, such as a quantized
worker's, may never be made on this run), rules of severity error, and only what the
tree's own worker the class extends passes (`worker_check.stands_for`: a subclass of the
sync vLLM worker is not asked for what only the async one has; of a class extending none,
what every worker of that driver passes): upstream's own gaps are the audit's business,
not a reason to refuse a run. What the model cannot find (the class outside the folders
read) is undecided: it passes.
"""

from __future__ import annotations

import os
import types
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.rules import Finding
    from nemo_rl_workers.guard.driver_model import DriverModel, OwnWorker
    from nemo_rl_workers.guard.worker_check import Base, Candidate

SHOWN = 3  # methods named in the sentence; the rest are counted
RULE = "driver-calls"  # the class lacks what the driver calls on its workers


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


def _tree_root(own_root: str) -> str:
    return str(Path(own_root).parent)


def calls_of(driver: DriverFrame, own_root: str, model: DriverModel | None = None
             ) -> list[tuple[str, int, tuple[str, ...] | None]]:
    """What `driver` always calls on its workers: (method, positional, keywords or None
    where some come from an unknown mapping), once each; of `model`, else of the tree's
    verified model."""
    from nemo_rl_workers.guard.driver_model import driver_model

    model = model or driver_model(_tree_root(own_root))
    out: dict[tuple[str, int, tuple[str, ...] | None], None] = {}
    for c in model.calls.get(driver.name, ()):
        if c.always:
            out[(c.method, c.positional, None if c.open_keywords else c.keywords)] = None
    return list(out)


def missing_calls(fqn: str, driver: DriverFrame, own_root: str) -> list[Finding]:
    """The audit's error findings for `fqn` on what `driver` always calls, less those the
    tree's own classes of that driver have too."""
    from nemo_rl_workers.checks.audit.rules import check
    from nemo_rl_workers.guard.class_model import class_model
    from nemo_rl_workers.guard.driver_model import driver_model
    from nemo_rl_workers.tree.drivers import Dispatch, WorkerChoice

    root = _tree_root(own_root)
    model = driver_model(root)
    dispatches = [
        Dispatch(c.driver, c.function, driver.name, c.method, frozenset(), frozenset(c.keywords),
                 c.open_keywords, c.positional, c.stream, c.call, c.helper)
        for c in model.calls.get(driver.name, ()) if c.unswitched]
    if not dispatches:
        return []
    subject = class_model(fqn, root)
    choice = WorkerChoice(fqn, frozenset(), driver.where)
    found, _ = check(subject.tree, subject.resolver, dispatches, {driver.name: (None, [choice])})
    known = model.known.get(driver.name, frozenset())
    info = subject.info(fqn)
    if info is not None:
        mro = [c.fqn for c in subject.resolver.mro(info).classes]
        extended = stands_for(mro, model.workers.get(driver.name, ()))
        if extended:  # held to the worker it extends, not to what another has
            known = frozenset().union(*(fails for _, _, fails in extended))
    return [f for f in found if f.severity == "error"
            and (f.rule, f.method, f.call) not in known]


def stands_for(mro: list[str], workers: tuple[OwnWorker, ...]) -> list[OwnWorker]:
    """The tree's own workers of the driver that a class (its MRO) extends."""
    from nemo_rl_workers.guard.driver_model import bases_of
    from nemo_rl_workers.guard.worker_check import stands_for as nearest

    chosen = {base[0] for base in nearest(mro, bases_of(workers))}
    return [w for w in workers if w[0] in chosen]


def bases_for(driver: DriverFrame, own_root: str, model: DriverModel | None = None
              ) -> tuple[Base, ...]:
    """The driver's own workers as the workers' interpreter takes them (`not_asked`)."""
    from nemo_rl_workers.guard.driver_model import bases_of, driver_model

    model = model or driver_model(_tree_root(own_root))
    return bases_of(model.workers.get(driver.name, ()))


def protocols_of(driver: DriverFrame, own_root: str,
                 model: DriverModel | None = None) -> tuple[Candidate, ...]:
    """The revision's Protocols a class built by `driver` may be judged against: (the
    default worker FQN of a role of the driver, its Protocol's name, its module), each
    one emission could have written. The workers' interpreter picks the one whose worker
    the class's MRO holds, else the driver's one Protocol (`worker_check.chosen`): the
    live class decides, and the task is sent before the class's source is modelled."""
    from nemo_rl_workers.guard.driver_model import driver_model, safe_protocols

    model = model or driver_model(_tree_root(own_root))
    out: list[Candidate] = []
    for worker, name in model.roles.get(driver.name, ()):
        text = model.protocols.get(name)
        if text is not None and safe_protocols(text):
            out.append((worker, name, text))
    return tuple(out)


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


def binding_in_source(fqn: str, method: str, own_root: str) -> tuple[str, str, str]:
    """What the class's source on the driver's path binds `method` to, first in its MRO:
    ("method" or "attribute", the class's FQN, file:line); ("none", "", "") where no
    class of its MRO binds it; ("unknown", "", "") where that cannot be told (the class
    not modelled, a base outside the folders read)."""
    from nemo_rl_workers.guard.class_model import class_model

    subject = class_model(fqn, _tree_root(own_root))
    info = subject.info(fqn)
    if info is None:
        return "unknown", "", ""
    mro = subject.resolver.mro(info)
    for owner in mro.classes:
        if method in owner.methods:
            return "method", owner.fqn, owner.methods[method].where
        if method in owner.attributes:
            return "attribute", owner.fqn, owner.where
    return ("unknown" if mro.unknown or mro.problem is not None else "none"), "", ""


def defined_below(fqn: str, method: str, own_root: str) -> tuple[str, str] | None:
    """The tree's own class of the class's MRO that defines `method` as a method, and
    where; None where none does."""
    from nemo_rl_workers.guard.class_model import class_model

    subject = class_model(fqn, _tree_root(own_root))
    info = subject.info(fqn)
    if info is None:
        return None
    for owner in subject.resolver.mro(info).classes:
        if method in owner.methods and not subject.owns(owner.file):
            return owner.fqn, owner.methods[method].where
    return None


def call_of(driver: DriverFrame, method: str, own_root: str) -> tuple[str, str] | None:
    """Where the driver calls `method` on its workers (file:line) and in which function,
    first of its unconditional calls; None where it makes no such call."""
    from nemo_rl_workers.guard.driver_model import driver_model

    model = driver_model(_tree_root(own_root))
    calls = [c for c in model.calls.get(driver.name, ()) if c.method == method]
    calls.sort(key=lambda c: not c.always)
    return (calls[0].call, calls[0].function) if calls else None
