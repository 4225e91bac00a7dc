"""Calls on the driver-side interfaces: an algorithm or entry script holds a driver only
as the interface it implements (`policy_generation: GenerationInterface`), and calls it
directly; every implementation in the tree must take that call.

- an *interface*: a class of the tree in the MRO of a driver (not the driver itself)
  that declares an abstract method or is an ABC / Protocol;
- its *implementations*: the tree's classes below it that are not interfaces;
- a *call on it*: `p.m(...)` where `p` is a parameter annotated with the interface
  (`I`, `Optional[I]`, `I | None`), in any function of the tree or of `examples/`; or
  `self.a.m(...)` where every binding of `a` in the class (and its bases in the tree) is
  an annotation naming the interface, `self.a = p` from such a parameter, or `None`
  (`self.policy_generation = policy_generation` in a collector's `__init__`). An
  attribute bound to anything else is not read as the interface: no finding;
- each call against each implementation: a method none of its MRO has
  (`missing-method`), a keyword its method does not take (`unknown-keyword`), a
  required parameter not given (`required-not-sent`). A call under
  `isinstance(p, C)` reaches only the classes C names; under `hasattr(p, "m")` none
  that lack m. A method the interface does not declare is judged only where no
  implementation has it: where some do, the caller holds one of those by means the
  source does not type.

Everything here is derived from the tree: no interface or driver is named.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from nemo_rl_workers.checks.audit.call_fit import Sent, fit
from nemo_rl_workers.checks.audit.rules import Finding
from nemo_rl_workers.findings import registry as said
from nemo_rl_workers.findings.registry import Message
from nemo_rl_workers.tree.source import (
    CallSite,
    ClassInfo,
    Function,
    Resolver,
    SourceTree,
    resolve_fqn,
    resolve_local,
)

_MARKERS = frozenset({"ABC", "Protocol"})


@dataclass(frozen=True)
class InterfaceCall:
    function: str  # qualname of the calling function
    method: str
    call: CallSite
    interface: ClassInfo
    implementations: tuple[ClassInfo, ...]


def _is_interface(info: ClassInfo) -> bool:
    return any(m.is_abstract for m in info.methods.values()) or any(
        b.rsplit(".", 1)[-1].split("[")[0] in _MARKERS for b in info.bases)


def interfaces_of(tree: SourceTree, resolver: Resolver,
                  drivers: Iterable[str]) -> dict[str, ClassInfo]:
    """The interfaces the drivers (by FQN) implement, by FQN."""
    out: dict[str, ClassInfo] = {}
    root = tree.roots[0]
    for fqn in drivers:
        info = tree.classes.get(fqn)
        if info is None:
            continue
        for base in resolver.mro(info).classes[1:]:
            if base.file.startswith(root) and _is_interface(base):
                out[base.fqn] = base
    return out


def _implementations(tree: SourceTree, resolver: Resolver, interface: ClassInfo,
                     workers: set[str]) -> tuple[ClassInfo, ...]:
    """The classes below the interface, but for worker classes (those the drivers start,
    their subclasses and their bases): workers that also inherit it are reached through
    their drivers, never held as the interface."""
    root = tree.roots[0]
    worker_side = {c.fqn for w in workers if (info := resolve_fqn(tree, w)) is not None
                   for c in resolver.mro(info).classes}  # workers and their own bases
    found = [info for info in list(tree.classes.values())
             if info is not interface and info.file.startswith(root)
             and not _is_interface(info) and info.fqn not in worker_side
             and interface in (mro := resolver.mro(info).classes)
             and not any(c.fqn in workers for c in mro)]
    return tuple(sorted(found, key=lambda c: c.fqn))


def _annotated(tree: SourceTree, function: Function,
               interfaces: dict[str, ClassInfo]) -> dict[str, ClassInfo]:
    """Parameter name -> the interface its annotation names."""
    out: dict[str, ClassInfo] = {}
    for param in function.params:
        if not param.annotation:
            continue
        try:
            node = ast.parse(param.annotation, mode="eval").body
        except SyntaxError:
            continue
        found = _annotation_interface(tree, function.module, node, interfaces)
        if found is not None:
            out[param.name] = found
    return out


def _annotation_interface(tree: SourceTree, module: str, annotation: ast.expr,
                          interfaces: dict[str, ClassInfo]) -> ClassInfo | None:
    """The one interface an annotation expression names, if it names one."""
    info = tree.modules.get(module)
    if info is None:
        return None
    named = {resolve_local(info, ast.unparse(n)) for n in ast.walk(annotation)
             if isinstance(n, (ast.Name, ast.Attribute))}
    hits = {interfaces[n].fqn: interfaces[n] for n in named if n in interfaces}
    return next(iter(hits.values())) if len(hits) == 1 else None


def _self_attribute(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "self":
        return node.attr
    return None


class _HeldAttributes:
    """Per class, the attributes it holds as an interface: every binding of `self.a` (or a
    class-level `a: I`) in the class and its bases in the tree names the same interface,
    through an annotation, a parameter annotated with it, or `None`."""

    def __init__(self, tree: SourceTree, resolver: Resolver,
                 interfaces: dict[str, ClassInfo]) -> None:
        self.tree = tree
        self.resolver = resolver
        self.interfaces = interfaces
        self._held: dict[str, dict[str, ClassInfo]] = {}

    def of(self, cls: ClassInfo) -> dict[str, ClassInfo]:
        if cls.fqn not in self._held:
            held: dict[str, ClassInfo | None] = {}
            for owner in self.resolver.mro(cls).classes:
                if owner.file.startswith(self.tree.roots[0]):
                    self._bindings(owner, held)
            self._held[cls.fqn] = {a: i for a, i in held.items() if i is not None}
        return self._held[cls.fqn]

    def _bindings(self, owner: ClassInfo, held: dict[str, ClassInfo | None]) -> None:
        def bind(attribute: str, interface: ClassInfo | None) -> None:
            # One binding to something else (or to another interface) and the attribute
            # is not read as an interface at all.
            if attribute in held and held[attribute] is not interface:
                held[attribute] = None
            else:
                held.setdefault(attribute, interface)

        for statement in owner.node.body:  # class-level `a: I`
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                bind(statement.target.id, _annotation_interface(
                    self.tree, owner.module, statement.annotation, self.interfaces))
        for method in owner.methods.values():
            params = _annotated(self.tree, method, self.interfaces)
            for node in ast.walk(method.node):
                if isinstance(node, ast.AnnAssign) and \
                        (attribute := _self_attribute(node.target)) is not None:
                    bind(attribute, _annotation_interface(
                        self.tree, owner.module, node.annotation, self.interfaces))
                elif isinstance(node, ast.Assign):
                    for target in node.targets:
                        attribute = _self_attribute(target)
                        if attribute is None:
                            continue
                        value = node.value
                        if isinstance(value, ast.Constant) and value.value is None:
                            continue
                        bind(attribute, params.get(value.id) if isinstance(
                            value, ast.Name) else None)


def interface_calls(tree: SourceTree, resolver: Resolver, drivers: Iterable[str],
                    workers: set[str]) -> list[InterfaceCall]:
    """`drivers`: the drivers' FQNs; `workers`: the worker classes they start."""
    interfaces = interfaces_of(tree, resolver, drivers)
    if not interfaces:
        return []
    names = {i.name for i in interfaces.values()}
    implementations: dict[str, tuple[ClassInfo, ...]] = {}
    params: dict[tuple[str, str], dict[str, ClassInfo]] = {}
    attributes = _HeldAttributes(tree, resolver, interfaces)
    out: list[InterfaceCall] = []
    for call in tree.calls:
        func = call.node.func
        if not isinstance(func, ast.Attribute):
            continue
        receiver = func.value
        function = tree.function_of(call)
        if function is None:
            continue
        interface: ClassInfo | None = None
        if isinstance(receiver, ast.Name):
            if not any(p.annotation and any(n in p.annotation for n in names)
                       for p in function.params):
                continue
            key = (function.module, function.qualname)
            if key not in params:
                params[key] = _annotated(tree, function, interfaces)
            interface = params[key].get(receiver.id)
        elif (attribute := _self_attribute(receiver)) is not None and call.cls is not None:
            cls = tree.classes.get(f"{call.module}.{call.cls.split('.')[0]}")
            interface = attributes.of(cls).get(attribute) if cls is not None else None
        if interface is None:
            continue
        if interface.fqn not in implementations:
            implementations[interface.fqn] = _implementations(tree, resolver, interface,
                                                               workers)
        out.append(InterfaceCall(function.qualname, func.attr, call, interface,
                                 _narrowed(tree, call, ast.unparse(receiver), func.attr,
                                           implementations[interface.fqn], resolver)))
    return out


def _narrowed(tree: SourceTree, call: CallSite, name: str, method: str,
              classes: tuple[ClassInfo, ...], resolver: Resolver) -> tuple[ClassInfo, ...]:
    """The classes the call's guards let through (`name`: the receiver as written, `p`
    or `self.a`): `isinstance(name, C)` keeps C's
    subclasses (or drops them when it does not hold), `hasattr(name, "m")` those with m."""
    module = tree.modules.get(call.module)
    kept = list(classes)
    tests: list[tuple[ast.expr, bool]] = []
    todo = [(g.test, g.holds) for g in call.guards]
    function = tree.function_of(call)
    seen: set[str] = set()
    while todo:
        test, holds = todo.pop()
        assigned = function.assignments.get(test.id, []) if (
            isinstance(test, ast.Name) and function is not None and test.id not in seen) else []
        if len(assigned) == 1 and isinstance(test, ast.Name):  # `ok = ... and hasattr(...)`
            seen.add(test.id)
            todo.append((assigned[0].value, holds))
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            todo.append((test.operand, not holds))
        elif isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == holds:
            todo.extend((value, holds) for value in test.values)  # each part holds
        else:
            tests.append((test, holds))
    for test, holds in tests:
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)
                and len(test.args) == 2 and ast.unparse(test.args[0]) == name):
            continue
        if test.func.id == "hasattr" and isinstance(test.args[1], ast.Constant) and holds:
            attribute = str(test.args[1].value)
            kept = [c for c in kept if resolver.find_method(c, attribute) is not None
                    or resolver.has_attribute(c, attribute)]
        elif test.func.id == "isinstance" and module is not None:
            targets = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [
                test.args[1]]
            named = [resolve_fqn(tree, resolve_local(module, ast.unparse(t))) for t in targets]
            if any(n is None for n in named):
                if holds:
                    return ()  # narrowed to a class the tree does not define: not judged
                continue
            within = [c for c in kept if any(n in resolver.mro(c).classes for n in named)]
            kept = within if holds else [c for c in kept if c not in within]
    return tuple(kept)


def check_interface_calls(resolver: Resolver, calls: list[InterfaceCall]) -> list[Finding]:
    out: list[Finding] = []
    for item in calls:
        node = item.call.node
        if resolver.find_method(item.interface, item.method) is None and any(
                resolver.find_method(impl, item.method) is not None
                for impl in item.implementations):
            # A method outside the interface that some implementations have: the caller
            # holds one of those, by code the source does not type (upstream's rollout
            # manager calls `generate_async` on the vLLM or SGLang backend its setup
            # built). Which it can hold cannot be told, so it is not judged.
            continue
        for impl in item.implementations:
            out.extend(_judge(resolver, item, impl, node))
    return out


def _judge(resolver: Resolver, item: InterfaceCall, impl: ClassInfo,
           node: ast.Call) -> list[Finding]:
    def finding(message: Message, definition: str, **args: str) -> Finding:
        return Finding(message, item.function, item.method, impl.fqn, item.call.where,
                       definition, (("interface", item.interface.name), *args.items()))

    located = resolver.find_method(impl, item.method)
    if located is None:
        mro = resolver.mro(impl)
        if resolver.has_attribute(impl, item.method) or mro.unknown or mro.problem:
            return []
        return [finding(said.INTERFACE_NO_SUCH_METHOD, mro.classes[-1].where,
                        end=mro.classes[-1].name)]
    function, owner = located
    if any(d.split("(")[0].rsplit(".", 1)[-1] not in ("abstractmethod", "override")
           for d in function.decorators):
        return []  # a decorator may change what it takes
    shape = fit(function, Sent.of(node))
    out: list[Finding] = []
    for keyword in shape.unknown_keywords:
        out.append(finding(said.INTERFACE_NO_SUCH_PARAMETER, function.where,
                           keyword=keyword, owner=owner.name))
    for name in shape.missing:
        out.append(finding(said.INTERFACE_NEVER_SENT, function.where, name=name,
                           owner=owner.name))
    return out
