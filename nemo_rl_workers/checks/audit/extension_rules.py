"""Extensions against the NeMo-RL revision they are written for, from source.

For one extension class (a subclass of some worker a driver starts):
- its *role*: the driver whose worker it extends, found from its MRO (the worker class
  of a driver that shares the nearest base with it);
- its *own* classes: those of its MRO that are not in that worker's MRO (the class
  itself, the user's mixins);
- every `super().m(...)` / `self.m(...)` in its own classes' methods, resolved against
  its MRO at that revision: a missing method, an unknown keyword, a missing required
  argument, too many positional arguments;
- every driver call of the role, against its whole MRO: a method it lacks where the
  tree's worker has one (renamed, or a base below the class that defines it); a keyword
  the driver sends that the method it reaches does not take, a required parameter never
  sent (where that is its own override, or a base's the tree's worker overrides); or a
  name one of its own classes hides, binding it to a literal where a base defines the
  method.

A method the driver calls that the tree's worker lacks too is never the extension's
finding: it is the driver side's, on the tree's own worker. Nor is a call that reaches
the very definition the tree's worker reaches.

What cannot be told (a base outside the tree, a decorator that may change the
signature, a `*args`/`**kwargs` at the call) is *unknown*: listed, never a finding.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from nemo_rl_workers.checks.audit.call_fit import Sent, fit
from nemo_rl_workers.checks.audit.extension_knowledge import TRANSPARENT_DECORATORS
from nemo_rl_workers.checks.audit.rules import Finding
from nemo_rl_workers.findings import registry as said
from nemo_rl_workers.findings.registry import Message
from nemo_rl_workers.tree.conditions import Condition, either
from nemo_rl_workers.tree.knowledge import is_actor_class
from nemo_rl_workers.tree.source import (
    ClassInfo,
    Function,
    Resolver,
    SourceTree,
    base_names,
    resolve_fqn,
)


@dataclass(frozen=True)
class DriverCall:
    """A worker method a driver calls by name (from the driver side of the audit)."""

    driver: str  # the calling function, e.g. "Policy.train"
    owner: str  # the driver whose workers receive it, e.g. "Policy"
    method: str
    keywords: frozenset[str]
    open_keywords: bool
    positional: int
    call: str
    condition: Condition = frozenset()


@dataclass(frozen=True)
class RoleWorker:
    """A worker class a driver can start, under a condition."""

    driver: str
    fqn: str
    condition: Condition = frozenset()


@dataclass
class ExtensionAudit:
    """What the audit learned about one extension class."""

    fqn: str
    info: ClassInfo | None
    role: str | None = None
    stands_for: RoleWorker | None = None
    own: tuple[str, ...] = ()
    findings: list[Finding] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    calls_checked: int = 0  # super()/self calls judged
    driver_calls_checked: int = 0  # driver calls that reach one of its overrides

    @property
    def where(self) -> str:
        return self.info.where if self.info is not None else ""


def _conflicts(a: Condition, b: Condition) -> bool:
    return any((name, not value) in b for name, value in a)


def keeps_signature(function: Function) -> bool:
    """Whether the decorators keep the signature a caller must bind (or forward to it)."""
    return all(d.split("(")[0] in TRANSPARENT_DECORATORS for d in function.decorators)


def self_nodes(function: Function) -> list[ast.AST]:
    """The nodes of a method's body where `self` is the method's own: nested functions
    and lambdas that take a parameter `self` (a patched method), and nested classes,
    are left out."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(function.node.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.ClassDef):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            if any(a.arg == "self" for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
                continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def find_role(
    resolver: Resolver, info: ClassInfo, workers: Sequence[RoleWorker]
) -> tuple[RoleWorker | None, list[RoleWorker]]:
    """The worker the extension stands for: the driver worker sharing the nearest base
    (ties: every such worker, the first one chosen, all returned)."""
    mro = [c.fqn for c in resolver.mro(info).classes]
    best: int | None = None
    chosen: list[RoleWorker] = []
    for worker in workers:
        target = resolve_fqn(resolver.tree, worker.fqn)
        if target is None:
            continue
        theirs = {c.fqn for c in resolver.mro(target).classes}
        position = next((i for i, fqn in enumerate(mro[1:], 1) if fqn in theirs), None)
        if position is None:
            continue
        if best is None or position < best:
            best, chosen = position, [worker]
        elif position == best:
            chosen.append(worker)
    return (chosen[0] if chosen else None), chosen


def audit_extension(
    tree: SourceTree,
    resolver: Resolver,
    fqn: str,
    workers: Sequence[RoleWorker],
    driver_calls: Iterable[DriverCall],
) -> ExtensionAudit:
    info = resolve_fqn(tree, fqn)
    audit = ExtensionAudit(fqn, info)
    if info is None:
        audit.unknown.append(f"{fqn}: no such class in the tree or under --path")
        return audit
    mro = resolver.mro(info)
    if mro.problem is not None:
        audit.unknown.append(f"{fqn}: {mro.problem}")
        return audit
    calls = list(driver_calls)
    stands_for, ties = find_role(resolver, info, workers)
    stands_for, undecided = _best_fit(resolver, info, stands_for, ties, calls)
    base_mro: set[str] = set()
    if stands_for is not None:
        audit.role, audit.stands_for = stands_for.driver, stands_for
        target = resolve_fqn(tree, stands_for.fqn)
        if target is not None:
            base_mro = {c.fqn for c in resolver.mro(target).classes}
        if len({w.driver for w in ties}) > 1:
            audit.unknown.append(
                f"{fqn}: its nearest NeMo-RL base is shared by workers of "
                f"{', '.join(sorted({w.driver for w in ties}))}; judged as {stands_for.driver}'s"
            )
        if undecided:
            audit.unknown.append(
                f"{fqn}: whether it takes the place of {' or '.join(w.fqn for w in undecided)} "
                "is not known (its nearest NeMo-RL base is theirs, and it answers as many "
                "of each one's calls): only the calls every one of them gets are judged")
    else:
        audit.unknown.append(f"{fqn}: extends no worker class a driver of the tree starts")
    own = [c for c in mro.classes if c.fqn not in base_mro]
    audit.own = tuple(c.fqn for c in own)
    _actor_bases(tree, info, mro.classes[1:], audit)
    if mro.unknown:
        audit.unknown.append(
            f"{fqn}: bases not found in the tree or under --path: {', '.join(mro.unknown)} "
            "(methods they may define are unknown)"
        )
    worker = resolve_fqn(tree, stands_for.fqn) if stands_for is not None else None
    checker = MethodCalls(tree, resolver, info, audit, worker)
    for cls in own:
        for function in cls.methods.values():
            checker.body_calls(cls, function)
    if stands_for is not None:
        for call in calls:
            if call.owner != stands_for.driver or any(
                    _conflicts(call.condition, w.condition) for w in undecided or [stands_for]):
                continue
            checker.driver_call(call, {c.fqn for c in own})
    return audit


def _best_fit(resolver: Resolver, info: ClassInfo, chosen: RoleWorker | None,
              ties: Sequence[RoleWorker], calls: Sequence[DriverCall],
              ) -> tuple[RoleWorker | None, list[RoleWorker]]:
    """Of workers of one driver that share the extension's nearest base (2025-09's sync
    and async vLLM workers both subclass BaseVllmGenerationWorker), the one whose calls
    (those made only under its switches) the extension's MRO answers most often; and,
    where several answer equally often, those (which one it stands for is undecided)."""
    if chosen is None:
        return None, []
    rivals = [w for w in ties if w.driver == chosen.driver]
    if len(rivals) < 2:
        return chosen, []

    def answered(worker: RoleWorker) -> int:
        return sum(1 for c in calls
                   if c.owner == worker.driver and c.condition
                   and not _conflicts(c.condition, worker.condition)
                   and resolver.find_method(info, c.method) is not None)

    scores = {id(w): answered(w) for w in rivals}
    best = max(scores.values())
    equal = [w for w in rivals if scores[id(w)] == best]
    return equal[0], (equal if len(equal) > 1 else [])


def _actor_bases(tree: SourceTree, info: ClassInfo, ancestors: Sequence[ClassInfo],
                 audit: ExtensionAudit) -> None:
    """A base decorated `@ray.remote` is an ActorClass: Ray refuses to start a subclass
    of it. Name the undecorated class it wraps (its own base) to subclass instead."""
    for cls in ancestors:
        if not is_actor_class(cls.decorators):
            continue
        wrapped = [b for b in (resolve_fqn(tree, n) for n in base_names(tree, cls))
                   if b is not None and not is_actor_class(b.decorators)]
        instead = (f"subclass {wrapped[0].fqn}, the undecorated class it wraps, instead"
                   if wrapped else f"move {cls.name}'s body into an undecorated class and "
                   "subclass that")
        audit.findings.append(Finding(
            said.SUBCLASSES_ACTOR, info.name, "__init__", info.fqn, info.where, cls.where,
            (("actor", cls.fqn), ("instead", instead))))
        return


@dataclass
class MethodCalls:
    tree: SourceTree
    resolver: Resolver
    info: ClassInfo
    audit: ExtensionAudit
    worker: ClassInfo | None = None  # the tree's worker class the extension stands for

    def __post_init__(self) -> None:
        self.mro = list(self.resolver.mro(self.info).classes)
        self.unknown_after = self._unknown_positions()
        self.instance_attributes = self._instance_attributes()

    def _unknown_positions(self) -> int | None:
        """The first MRO index whose class has a base outside the tree (None: none)."""
        for index, cls in enumerate(self.mro):
            for name in base_names(self.tree, cls):
                if resolve_fqn(self.tree, name) is None:
                    return index
        return None

    def _instance_attributes(self) -> set[str]:
        """Names any class of the MRO assigns on `self` (a callable may be stored there)."""
        out: set[str] = set()
        for cls in self.mro:
            for function in cls.methods.values():
                for node in ast.walk(function.node):
                    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        for target in targets:
                            if (isinstance(target, ast.Attribute)
                                    and isinstance(target.value, ast.Name)
                                    and target.value.id == "self"):
                                out.add(target.attr)
        return out

    def lookup(self, name: str, start: int) -> tuple[Function, ClassInfo] | str:
        """The method `name` an instance finds from MRO index `start`, or why not known."""
        for index in range(start, len(self.mro)):
            if self.unknown_after is not None and index > self.unknown_after:
                return "unknown"
            cls = self.mro[index]
            if name in cls.methods:
                return cls.methods[name], cls
            if name in cls.attributes:
                return "attribute"
            if "__getattr__" in cls.methods:
                return "unknown"
        if self.unknown_after is not None:
            return "unknown"
        return "missing"

    def body_calls(self, cls: ClassInfo, function: Function) -> None:
        index = self.mro.index(cls)
        for node in self_nodes(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            receiver = node.func.value
            via_super = (
                isinstance(receiver, ast.Call)
                and isinstance(receiver.func, ast.Name)
                and receiver.func.id == "super"
                and not receiver.args
            )
            via_self = isinstance(receiver, ast.Name) and receiver.id == "self"
            if not (via_super or via_self):
                continue
            name = node.func.attr
            if via_self and (name in self.instance_attributes or name.startswith("__")):
                continue
            found = self.lookup(name, index + 1 if via_super else 0)
            spelled = f"{'super()' if via_super else 'self'}.{name}"
            where = f"{function.file}:{node.lineno}"
            caller = f"{cls.name}.{function.name}"
            if found == "missing":
                self.finding(
                    said.EXTENSION_NO_SUCH_METHOD, caller, name, where, self.mro[-1].where,
                    spelled=spelled, count=str(len(self.mro)), end=self.mro[-1].fqn)
                continue
            if isinstance(found, str):
                if found == "unknown":
                    self.audit.unknown.append(
                        f"{where}: {spelled}: may be defined by a base outside the tree")
                continue
            target, owner = found
            self.audit.calls_checked += 1
            self.arguments(node, target, owner, caller, spelled, where)

    def arguments(
        self, node: ast.Call, target: Function, owner: ClassInfo, caller: str, spelled: str,
        where: str,
    ) -> None:
        if not keeps_signature(target):
            self.audit.unknown.append(
                f"{where}: {spelled}: {owner.name}.{target.name} is decorated "
                f"({', '.join(target.decorators)}); its signature is not judged")
            return
        shape = fit(target, Sent.of(node))
        for keyword in shape.unknown_keywords:
            self.finding(
                said.EXTENSION_NO_SUCH_PARAMETER, caller, target.name, where, target.where,
                spelled=spelled, keyword=keyword, owner=owner.fqn)
        if shape.too_many_positional:
            self.finding(
                said.EXTENSION_TOO_MANY, caller, target.name, where, target.where,
                spelled=spelled, count=str(len(node.args)), owner=owner.fqn,
                takes=str(shape.takes))
        for name in shape.missing:
            self.finding(
                said.EXTENSION_WITHOUT, caller, target.name, where, target.where,
                spelled=spelled, name=name, owner=owner.fqn)

    def driver_call(self, call: DriverCall, own: set[str]) -> None:
        found = self.lookup(call.method, 0)
        if found == "attribute":
            self.hidden(call, own)
            return
        theirs = (self.resolver.find_method(self.worker, call.method)
                  if self.worker is not None else None)
        if found == "missing":
            if theirs is not None:
                self.missing(call, theirs[1])
            return  # else missing on the tree's worker too: the driver-side audit's
        if isinstance(found, str):
            return
        target, owner = found
        if owner.fqn not in own and theirs is not None and theirs[0] is target:
            return  # the tree's worker's own definition: judged by the driver-side audit
        self.audit.driver_calls_checked += 1
        if not keeps_signature(target):
            self.audit.unknown.append(
                f"{call.call}: {call.method}: the override {owner.name}.{target.name} is "
                f"decorated ({', '.join(target.decorators)}); its signature is not judged")
            return
        # An own override, or a base's method the tree's worker does not reach (its
        # worker overrides it): either way what the extension's workers run.
        what = "override" if owner.fqn in own else "method"
        shape = fit(target, Sent(tuple(sorted(call.keywords)), call.positional,
                                 call.open_keywords))
        for keyword in shape.unknown_keywords:
            self.finding(
                said.OVERRIDE_NO_SUCH_PARAMETER, call.driver, call.method, call.call,
                target.where, call.condition, keyword=keyword, what=what, owner=owner.fqn,
                target=target.name)
        for name in shape.missing:
            self.finding(
                said.OVERRIDE_WITHOUT, call.driver, call.method, call.call, target.where,
                call.condition, name=name, what=what, owner=owner.fqn, target=target.name)

    def missing(self, call: DriverCall, defined_in: ClassInfo) -> None:
        """The driver calls a method the tree's worker has and the extension's MRO lacks
        (renamed, or its base is a class below the one that defines it)."""
        end = self.mro[-1]
        worker = self.worker.fqn if self.worker is not None else "the tree's worker"
        source = "defines it" if defined_in.fqn == worker else f"gets it from {defined_in.fqn}"
        self.finding(
            said.EXTENSION_LACKS_METHOD, call.driver, call.method, call.call, end.where,
            call.condition, end=end.name, base=worker, source=source, name=self.info.name)

    def hidden(self, call: DriverCall, own: set[str]) -> None:
        """A name the driver calls that one of the extension's own classes binds to a
        literal, ahead of a base's method of that name."""
        index, cls = next((i, c) for i, c in enumerate(self.mro)
                          if call.method in c.attributes)
        if cls.fqn not in own:
            return  # NeMo-RL's own binding: the driver side's
        below = next((c for c in self.mro[index + 1:] if call.method in c.methods), None)
        if below is None:
            return  # no base has it either: the driver side's finding, not the extension's
        value, line = _bound_value(cls, call.method)
        where = f"{cls.file}:{line}" if line else cls.where
        if not isinstance(value, ast.Constant):
            self.audit.unknown.append(
                f"{where}: {cls.name}.{call.method} is bound to "
                f"{ast.unparse(value) if value is not None else 'a value'}, ahead of "
                f"{below.name}.{call.method}: whether it is a method is not known")
            return
        self.finding(
            said.BOUND_TO_A_VALUE, call.driver, call.method, call.call, where, call.condition,
            cls=cls.fqn, value=ast.unparse(value), below=below.fqn)

    def finding(
        self, message: Message, driver: str, method: str, call: str, definition: str,
        condition: Condition = frozenset(), **args: str,
    ) -> None:
        self.audit.findings.append(Finding(
            message, driver, method, self.info.fqn, call, definition, tuple(args.items()),
            either([condition])))


def _bound_value(cls: ClassInfo, name: str) -> tuple[ast.expr | None, int]:
    """The value the class body last binds `name` to by assignment, and its line (None, 0
    where it is bound otherwise: an import, a nested class)."""
    value: ast.expr | None = None
    line = 0
    for node in cls.node.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value, line = node.value, node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.target.id == name and node.value is not None:
            value, line = node.value, node.lineno
    return value, line
