"""Which driver an entry module's `setup` builds on which block of its config.

An entry (an algorithm's `setup`, the evaluation's `setup`) builds its drivers from blocks
of the whole config it takes: `VllmGeneration(cluster=cluster, config=generation_config)`
after `generation_config = master_config.generation`. The evaluation entry builds a
generation driver on a top-level `generation:` block with no policy at all; a check that
judged only the model sections would show no worker for it. This module reads, from the
source model (nothing imported), each driver construction inside an entry's `setup`
whose config argument is a block of the entry config: the driver, the block's path, and
where. Local names bound once to a block (or a block of a block) are followed; a block
the code computes (`deepcopy`, a function's result) is not a path and is left out.

A `setup` may build a driver through a module-level function of the tree it calls with
blocks of its config (GRPO's `opd_module.create_teacher_worker_groups(master_config,
policy_config, ...)` builds a `TeacherWorkerGroup(policy_config=policy_config)` per
teacher): the function's parameters are bound to the blocks its call passes, and the
drivers it builds on them are recorded with the call (`via`), whose conditions in `setup`
decide, per config, whether it runs (`checks.config.entry_reach`). One call deep.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from nemo_rl_workers.tree.source import Function, Module, SourceTree
from nemo_rl_workers.tree.source.resolve import dotted_name, resolve_function, resolve_local

MAX_HOPS = 8  # local names followed from one argument
CLUSTER_KEYWORD = "cluster"  # a driver's constructor argument naming its cluster


@dataclass(frozen=True)
class EntryBuild:
    """One driver an entry's `setup` builds on a block of its config."""

    module: str  # the entry module, e.g. "nemo_rl.evals.eval"
    driver: str  # the driver class's name
    section: str  # the block's config path, e.g. "generation", "policy.generation"
    where: str  # file:line of the construction
    # The local name of the cluster it is built on (its `cluster=` argument), if a name.
    cluster: str | None = None
    # file:line of the call in `setup` of the tree's function that builds it, if not
    # built in `setup` itself.
    via: str | None = None


def entry_modules(tree: SourceTree) -> list[str]:
    """The modules directly in an entry package (`ENTRY_PACKAGES`) that define `setup`
    taking a config."""
    from nemo_rl_workers.tree.knowledge import ENTRY_PACKAGES, SETUP

    found: list[str] = []
    for package in ENTRY_PACKAGES:
        depth = package.count(".") + 1
        for name in sorted(n for n in {*tree.modules, *tree.pending}
                           if n.startswith(f"{package}.") and n.count(".") == depth):
            module = tree.module(name)
            if module is not None and SETUP in module.functions and \
                    module.functions[SETUP].params:
                found.append(name)
    return found


def entry_builds(tree: SourceTree, drivers: Iterable[str]) -> tuple[EntryBuild, ...]:
    """Every (entry module, driver, config block) its `setup` builds, in source order."""
    from nemo_rl_workers.tree.knowledge import SETUP

    names = frozenset(drivers)
    out: list[EntryBuild] = []
    for name in entry_modules(tree):
        module = tree.module(name)
        if module is None:
            continue
        function = module.functions[SETUP]
        paths = _Paths(function, {function.params[0].name: ""})
        out.extend(_builds(name, function, paths, names))
        for node in ast.walk(function.node):
            if not isinstance(node, ast.Call) or all(
                    paths.of(a) is None for a in [*node.args, *(k.value for k in node.keywords)]):
                continue  # passes no block of the config: its modules are not modelled
            helper = _helper(tree, module, node, names)
            if helper is None:
                continue
            bound = _bound(helper, node, paths)
            if bound:
                via = f"{function.file}:{node.lineno}"
                out.extend(replace(b, via=via, cluster=None) for b in _builds(
                    name, helper, _Paths(helper, bound), names))
    return tuple(dict.fromkeys(out))


def _builds(entry: str, function: Function, paths: _Paths,
            names: frozenset[str]) -> Iterator[EntryBuild]:
    for node in ast.walk(function.node):
        if not isinstance(node, ast.Call):
            continue
        called = _driver_called(node, function, names)
        if called is None:
            continue
        cluster = next((k.value.id for k in node.keywords if k.arg == CLUSTER_KEYWORD
                        and isinstance(k.value, ast.Name)), None)
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            path = paths.of(argument)
            if path:
                yield EntryBuild(entry, called, path, f"{function.file}:{node.lineno}", cluster)
                break


def _helper(tree: SourceTree, module: Module, node: ast.Call,
            names: frozenset[str]) -> Function | None:
    """The tree's module-level function a call of `setup` names (`opd_module.f`, `f`),
    other than a driver."""
    dotted = dotted_name(node.func)
    if dotted is None or dotted.rpartition(".")[2] in names:
        return None
    head = dotted.partition(".")[0]
    if head not in module.imports and head not in module.functions:
        return None  # a local's method, a builtin
    found = resolve_function(tree, resolve_local(module, dotted))
    return found if found is not None and found.qualname == found.name else None


def _bound(helper: Function, node: ast.Call, paths: _Paths) -> dict[str, str]:
    """The helper's parameters the call passes a block of the config (or the whole) to."""
    params = [p.name for p in helper.params if p.kind in ("positional-only", "positional")]
    named = {p.name for p in helper.params if p.kind in ("positional", "keyword-only")}
    out: dict[str, str] = {}
    for param, argument in zip(params, node.args, strict=False):
        if isinstance(argument, ast.Starred):
            break
        path = paths.of(argument)
        if path is not None:
            out[param] = path
    for keyword in node.keywords:
        if keyword.arg in named:
            path = paths.of(keyword.value)
            if path is not None:
                out[keyword.arg] = path
    return out


def _driver_called(node: ast.Call, function: Function, names: frozenset[str]) -> str | None:
    """The driver a call builds: called by its name, or through a local bound once to an
    expression that names one driver (`_make = factory if factory is not None else
    Policy`; the factory a caller passes in is the caller's)."""
    func = node.func
    called = func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else None)
    if called in names:
        return called
    assigned = function.assignments.get(called or "", []) if isinstance(func, ast.Name) else []
    if len(assigned) != 1:
        return None
    named = {n.id for n in ast.walk(assigned[0].value) if isinstance(n, ast.Name)} & names
    return next(iter(named)) if len(named) == 1 else None


class _Paths:
    """Config paths of expressions in one function, whose parameters in `roots` hold
    blocks of the config (`setup`'s first is the whole config: the empty path)."""

    def __init__(self, function: Function, roots: Mapping[str, str]) -> None:
        self.function = function
        self.roots = roots

    def of(self, node: ast.expr, hops: int = 0) -> str | None:
        if hops > MAX_HOPS:
            return None
        if isinstance(node, ast.Name):
            if node.id in self.roots:  # a parameter the body rebinds holds another value
                return None if self.function.assignments.get(node.id) else self.roots[node.id]
            assigned = self.function.assignments.get(node.id, [])
            if len(assigned) != 1:
                return None  # rebound, or not a local: not one block
            return self.of(assigned[0].value, hops + 1)
        parent: ast.expr | None = None
        key: str | None = None
        if isinstance(node, ast.Attribute):
            parent, key = node.value, node.attr
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                isinstance(node.slice.value, str):
            parent, key = node.value, node.slice.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            parent, key = node.func.value, node.args[0].value
        if parent is None or key is None:
            return None
        above = self.of(parent, hops + 1)
        if above is None:
            return None
        return f"{above}.{key}" if above else key
