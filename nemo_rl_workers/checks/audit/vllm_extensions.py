"""vLLM's `worker_extension_cls` in a NeMo-RL tree: which extensions its generation
workers hand vLLM, whether vLLM's clash rule accepts each, and whether every
`collective_rpc("name")` they make reaches a method.

Read from the `nemo_rl_workers.tree.source` model (nothing imported). The extensions
are the strings given as `worker_extension_cls=` (a keyword,
`kwargs["worker_extension_cls"] = ...` or `.setdefault(...)`), the same for `worker_cls`
(a tree class vLLM uses instead of its own worker). An extension's names are `dir()`'s
as vLLM walks it: every class-level name of its MRO in the tree; a base outside the tree
makes the set unknown (reported, never passed as clean). The vLLM side is the installed
vllm-stubs' record (`nemo_rl_workers.checks.vllm.vllm_extension_rule`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeAlias

from nemo_rl_workers.checks.audit.string_values import functions_of, parameter_index, values
from nemo_rl_workers.checks.vllm.vllm_extension_rule import Clash, ExtensionRule, WorkerName
from nemo_rl_workers.tree.source import (
    ClassInfo,
    Function,
    Module,
    Resolver,
    SourceTree,
    base_names,
    resolve_fqn,
)

EXTENSION_KEY = "worker_extension_cls"
WORKER_KEY = "worker_cls"
RPC_METHOD = "collective_rpc"
RPC_NAME_KEYWORD = "method"

# (worker method, parameter, its position among a caller's arguments, the worker class)
# -> the strings the tree's calls of that method by name on such workers send for it,
# None when some cannot be told.
Sent: TypeAlias = Callable[[str, str, int | None, str], set[str] | None]
# (empty: no call sends it)


@dataclass(frozen=True)
class Named:
    """A class named by a string in the tree: which, where, and by whom."""

    fqn: str
    where: str
    by: str  # the function that names it, "module.qualname"
    cls: ClassInfo | None  # the class that names it (a generation worker), if a method


@dataclass(frozen=True)
class ExtensionNames:
    """What `dir()` of an extension holds, from source."""

    fqn: str
    info: ClassInfo | None
    names: Mapping[str, str]  # name -> FQN of the defining class
    unknown_bases: tuple[str, ...]

    @property
    def known(self) -> bool:
        return self.info is not None and not self.unknown_bases


@dataclass(frozen=True)
class RpcCall:
    """One `collective_rpc(...)` of a generation worker, with the names it can send."""

    where: str
    cls: ClassInfo
    function: str
    names: tuple[str, ...]  # empty when unresolved
    via: str = ""  # "through its parameter <p>" when the name comes from callers


@dataclass
class VllmTreeReport:
    """Everything the vLLM part of the audit found, for findings and for the report."""

    extensions: list[Named] = field(default_factory=list)
    workers: list[Named] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # where a class string is not known
    names: dict[str, ExtensionNames] = field(default_factory=dict)
    clashes: list[tuple[Named, Clash]] = field(default_factory=list)
    rpc_calls: list[RpcCall] = field(default_factory=list)
    rpc_unresolved: list[RpcCall] = field(default_factory=list)
    # (call, name, the extensions of its worker that lack it)
    rpc_missing: list[tuple[RpcCall, str, tuple[str, ...]]] = field(default_factory=list)


def _value_sites(
    tree: SourceTree, key: str
) -> Iterable[tuple[Module, ClassInfo | None, Function, ast.expr, int]]:
    """Every expression a function gives `key` as: `f(key=...)`, `d.setdefault(key, ...)`
    (from the model's call sites) and `d[key] = ...` (its item assignments)."""
    for call in list(tree.calls):
        function = tree.function_of(call)
        module = tree.module(call.module)
        if function is None or module is None:
            continue
        owner = tree.classes.get(f"{call.module}.{call.cls}") if call.cls else None
        value = call.keyword(key)
        if value is not None:
            yield module, owner, function, value, call.line
        node = call.node
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "setdefault"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == key
        ):
            yield module, owner, function, node.args[1], call.line
    for module, info, function in functions_of(tree):
        for assignment in function.item_assignments.get(key, ()):
            yield module, info, function, assignment.value, assignment.line


def named_classes(tree: SourceTree, key: str, unresolved: list[str]) -> list[Named]:
    out: dict[tuple[str, str], Named] = {}
    for module, info, function, node, line in _value_sites(tree, key):
        where = f"{function.file}:{line}"
        found = values(node, module, function)
        if found is None:
            unresolved.append(f"{where}: {key}={ast.unparse(node)}")
            continue
        for fqn in sorted(found):
            out.setdefault((fqn, where), Named(fqn, where, f"{module.name}.{function.qualname}",
                                               info))
    return sorted(out.values(), key=lambda n: (n.fqn, n.where))


def _class_names(info: ClassInfo) -> Iterable[str]:
    """The names a class statement binds, as `dir()` lists them (private ones mangled)."""
    for name in (*info.methods, *info.attributes):
        if name.startswith("__") and not name.endswith("__"):
            yield f"_{info.name.lstrip('_')}{name}"
        else:
            yield name


def extension_names(tree: SourceTree, resolver: Resolver, fqn: str) -> ExtensionNames:
    info = resolve_fqn(tree, fqn)
    if info is None:
        return ExtensionNames(fqn, None, {}, ())
    mro = resolver.mro(info)
    names: dict[str, str] = {}
    for owner in mro.classes:
        for name in _class_names(owner):
            names.setdefault(name, owner.fqn)
    return ExtensionNames(fqn, info, names, tuple(mro.unknown))


def _tree_worker_names(
    tree: SourceTree, resolver: Resolver, fqn: str
) -> tuple[dict[str, WorkerName], tuple[str, ...]]:
    """The names a tree's own worker class (a vLLM worker subclass) adds."""
    info = resolve_fqn(tree, fqn)
    if info is None:
        return {}, ()
    out: dict[str, WorkerName] = {}
    mro = resolver.mro(info)
    for owner in mro.classes:
        for name in _class_names(owner):
            line = owner.methods[name].line if name in owner.methods else owner.line
            out.setdefault(name, WorkerName(name, owner.fqn, owner.file, line, "method"))
    return out, tuple(mro.unknown)


def audit_vllm(
    tree: SourceTree,
    resolver: Resolver,
    rule: ExtensionRule,
    extra_extensions: Iterable[str] = (),
    passed: list[Named] | None = None,
    sent: Sent | None = None,
) -> VllmTreeReport:
    """`passed`: `named_classes(tree, EXTENSION_KEY, ...)` when the caller has it;
    `sent`: what the drivers' calls of a worker method send as one of its parameters
    (a worker method that passes a name on to `collective_rpc`)."""
    report = VllmTreeReport()
    report.extensions = passed if passed is not None else named_classes(
        tree, EXTENSION_KEY, report.unresolved)
    report.workers = named_classes(tree, WORKER_KEY, report.unresolved)
    given = [Named(fqn, "(command line)", "", None) for fqn in extra_extensions]
    for named in [*report.extensions, *given]:
        if named.fqn in report.names:
            names = report.names[named.fqn]
        else:
            names = report.names[named.fqn] = extension_names(tree, resolver, named.fqn)
        if named.fqn in {c.extension for _, c in report.clashes}:
            continue
        for clash in rule.clashes(named.fqn, names.names):
            report.clashes.append((named, clash))
        # A worker_cls of the tree's own adds names of its own (vLLM's still count).
        for worker in report.workers:
            extra, _ = _tree_worker_names(tree, resolver, worker.fqn)
            own = {n: w for n, w in extra.items() if n not in rule.worker_names()}
            for clash in rule.clashes(named.fqn, names.names, worker_extra=own):
                if clash.name in own:
                    report.clashes.append((named, clash))
    _collective_rpcs(tree, resolver, rule, report, sent)
    return report


def _direct_extensions(
    tree: SourceTree, owner: ClassInfo, by_class: Mapping[str, set[str]],
    by_function: Mapping[str, set[str]], called: Mapping[str, set[str]],
) -> set[str]:
    """The extensions one class statement names: in its methods, or in a module function
    of its module that they call by name (`called`: class FQN -> such names)."""
    found = set(by_class.get(owner.fqn, ()))
    for name in called.get(owner.fqn, ()):
        found |= by_function.get(f"{owner.module}.{name}", set())
    return found


def _module_functions_called(tree: SourceTree) -> dict[str, set[str]]:
    """Class FQN -> the names of its module's functions its methods call by plain name
    (read from the model's call sites, not by walking every method again)."""
    out: dict[str, set[str]] = {}
    for call in list(tree.calls):
        func = call.node.func
        if call.cls is None or not isinstance(func, ast.Name):
            continue
        module = tree.modules.get(call.module)
        if module is not None and func.id in module.functions:
            out.setdefault(f"{call.module}.{call.cls}", set()).add(func.id)
    return out


def _rpc_names(
    tree: SourceTree, module: Module, function: Function, call: ast.Call, sent: Sent | None,
    worker: ClassInfo,
) -> tuple[set[str] | None, str]:
    node = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == RPC_NAME_KEYWORD), None
    )
    if node is None:
        return None, ""
    found = values(node, module, function)
    if found is not None or not isinstance(node, ast.Name):
        return found, ""
    index, by_keyword = parameter_index(function, node.id)
    if index is None and not by_keyword:
        return None, ""
    # A parameter: the literals the callers in its module pass, and, for a worker
    # method, what the drivers' calls of it by name send.
    via = f"through its parameter {node.id}"
    out: set[str] = set()
    for other in list(tree.calls):
        if other.module != module.name or _called_name(other.node) != function.name:
            continue
        arg: ast.expr | None = None
        if index is not None and index < len(other.node.args):
            arg = other.node.args[index]
        elif by_keyword:
            arg = other.keyword(node.id)
        caller = _function(tree, other.module, other.function)
        given = None if arg is None else values(arg, module, caller)
        if given is None:
            return None, via
        out |= given
    if sent is not None and "." in function.qualname:
        from_drivers = sent(function.name, node.id, index, worker.fqn)
        if from_drivers is None:
            return None, via
        out |= from_drivers
    return (out or None), via


def _called_name(node: ast.Call) -> str | None:
    """`m` for `x.m(...)` and `m(...)`."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _function(tree: SourceTree, module_name: str, qualname: str | None) -> Function | None:
    if qualname is None:
        return None
    module = tree.module(module_name)
    if module is None:
        return None
    head, _, rest = qualname.rpartition(".")
    if not head:
        return module.functions.get(rest)
    info = tree.classes.get(f"{module_name}.{head}")
    return info.methods.get(rest) if info is not None else None


def _collective_rpcs(
    tree: SourceTree, resolver: Resolver, rule: ExtensionRule, report: VllmTreeReport,
    sent: Sent | None,
) -> None:
    by_class: dict[str, set[str]] = {}
    by_function: dict[str, set[str]] = {}
    for named in report.extensions:
        if named.cls is not None:
            by_class.setdefault(named.cls.fqn, set()).add(named.fqn)
        else:
            by_function.setdefault(named.by, set()).add(named.fqn)
    vllm_names = rule.worker_names()
    called = _module_functions_called(tree) if by_function else {}
    direct = {
        info.fqn: _direct_extensions(tree, info, by_class, by_function, called)
        for info in list(tree.classes.values())
    }
    rpc_nodes: dict[int, list[ast.Call]] = {}  # per function (by identity), walked once
    # A call written in a mixin runs with the extensions of each worker that has the mixin.
    seen: dict[str, RpcCall] = {}
    for info in _subclasses(tree, {fqn for fqn, found in direct.items() if found}):
        mro = resolver.mro(info).classes
        # The most derived class of the MRO that names extensions decides (an override
        # of the engine's arguments replaces its base's).
        extensions = next((direct[c.fqn] for c in mro if direct.get(c.fqn)), set())
        if not extensions:
            continue  # not a vLLM generation worker (TRT-LLM's, SGLang's: other engines)
        for owner in mro:
            module = tree.module(owner.module)
            if module is None:
                continue
            for function in owner.methods.values():
                if id(function) not in rpc_nodes:
                    rpc_nodes[id(function)] = [
                        node for node in ast.walk(function.node)
                        if isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr == RPC_METHOD
                    ]
                for node in rpc_nodes[id(function)]:
                    _check_rpc(tree, resolver, report, seen, vllm_names, info, extensions,
                               module, function, node, sent)


def _subclasses(tree: SourceTree, roots: set[str]) -> list[ClassInfo]:
    """The classes that have one of `roots` among their ancestors (roots included), found
    through direct bases only: no MRO of an unrelated class is computed."""
    children: dict[str, list[str]] = {}
    for info in list(tree.classes.values()):
        for name in base_names(tree, info):
            base = resolve_fqn(tree, name)
            if base is not None:
                children.setdefault(base.fqn, []).append(info.fqn)
    found: set[str] = set()
    todo = sorted(roots)
    while todo:
        fqn = todo.pop()
        if fqn in found:
            continue
        found.add(fqn)
        todo.extend(children.get(fqn, ()))
    return [tree.classes[fqn] for fqn in sorted(found) if fqn in tree.classes]


def _check_rpc(
    tree: SourceTree, resolver: Resolver, report: VllmTreeReport, seen: dict[str, RpcCall],
    vllm_names: Mapping[str, WorkerName], worker: ClassInfo, extensions: set[str],
    module: Module, function: Function, node: ast.Call, sent: Sent | None,
) -> None:
    where = f"{function.file}:{node.lineno}"
    # The names can depend on the worker (a parameter: the calls on that worker's
    # driver); the report lists each call site once, as its first worker sees it.
    names, via = _rpc_names(tree, module, function, node, sent, worker)
    call = RpcCall(where, worker, function.qualname, tuple(sorted(names or ())), via)
    if where not in seen:
        seen[where] = call
        (report.rpc_unresolved if names is None else report.rpc_calls).append(call)
    if not call.names:
        return
    for name in call.names:
        if name in vllm_names:
            continue  # vLLM's worker answers it itself
        lacking = []
        for fqn in sorted(extensions):
            ext = report.names.get(fqn) or extension_names(tree, resolver, fqn)
            if ext.known and name not in ext.names:
                lacking.append(fqn)
        if lacking and len(lacking) == len(extensions):
            report.rpc_missing.append((replace(call, cls=worker), name, tuple(lacking)))
