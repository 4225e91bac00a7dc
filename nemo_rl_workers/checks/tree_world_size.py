"""The policy's world size as a NeMo-RL tree computes it for one config, or why not.

The tree's entry `setup` sizes the cluster its policy (or, for the evaluation, its
generation) is built on: `cluster = RayVirtualCluster(bundle_ct_per_node_list=
[policy_gpus_per_node] * policy_nodes)`, after arithmetic that keeps GPUs or nodes for a
reward model (`env.reward_model.resources`), teachers or inference. The model records each
construction and the local each driver is built on (`Revision.cluster_builds`,
`EntryBuild.cluster`); this module walks the setup in statement order with the tree rules'
walker (`tree_rules`), on the config, and evaluates the bundle expression where the
setup builds that cluster: the world size is its sum. Small helpers the setup calls on
config values (`extract_necessary_env_names(data_config)`: which environments the data
names) are run here too, statement by statement, on the config's values (never imported;
loops bounded). What the walk cannot decide (a branch on a value this check does not
compute) is undecided, with the reason: never the reference's arithmetic in its place.
"""

from __future__ import annotations

import ast
import copy
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.checks.audit.config_expressions import (
    Environ,
    Evaluator,
    Known,
    Scope,
    Unknown,
    Value,
    show_value,
    truth,
)
from nemo_rl_workers.checks.entry_sections import entry_of
from nemo_rl_workers.checks.tree_rules import (
    _called_name,
    _field,
    _model,
    _own_nodes,
    _scope,
    _stops,
    _Walk,
    source_tree,
)
from nemo_rl_workers.tree.knowledge import SETUP, WORKER_GROUP_ATTRIBUTE
from nemo_rl_workers.tree.source.gc_pause import collector_paused

if TYPE_CHECKING:
    from nemo_rl_workers.tree.cluster_builds import ClusterBuild
    from nemo_rl_workers.tree.revision import Revision
    from nemo_rl_workers.tree.source import Function, SourceTree

MAX_CALL_DEPTH = 3  # helpers called from helpers
MAX_ITERATIONS = 1000  # loop turns run in one helper call
MAX_BUNDLES = 100_000  # a bundle list longer than this is not a cluster


@dataclass(frozen=True)
class TreeWorldSize:
    """The world size the tree computes (None: undecided) and how, or why not."""

    size: int | None
    how: str


@dataclass(frozen=True)
class _Cluster:
    """A cluster the walk saw built: its size, and the build."""

    size: int
    build: ClusterBuild


def tree_world_size(config: Mapping[str, Any], revision: Revision,
                    environ: Mapping[str, str] | None = None) -> TreeWorldSize | None:
    """The world size of the cluster the config's entry builds its first driver on (the
    policy's, else the generation's); None when the tree's entry builds none the model
    records (the size is then not this tree's to state)."""
    if revision.root is None:
        return None
    entry = entry_of(config, revision)
    if entry is None:
        return TreeWorldSize(None, "no entry of this tree runs on this config alone (its "
                                   "top-level keys fit no setup's config, or two alike)")
    build = next((b for b in revision.entry_builds
                  if b.module == entry and b.cluster is not None), None)
    clusters = [c for c in revision.cluster_builds if c.module == entry]
    if build is None or not clusters:
        return None
    with collector_paused():  # it models the modules it walks (see tree.source.gc_pause)
        return _size(config, revision, entry, build.cluster or "", build.driver, clusters,
                     environ)


def _size(config: Mapping[str, Any], revision: Revision, entry: str, name: str,
          driver: str, clusters: list[ClusterBuild],
          environ: Mapping[str, str] | None) -> TreeWorldSize:
    assert revision.root is not None
    tree = source_tree(revision.root)
    module = tree.module(entry)
    if module is None or SETUP not in module.functions:
        return TreeWorldSize(None, f"{entry}.{SETUP} could not be read")
    function = module.functions[SETUP]
    env = Environ(os.environ if environ is None else environ)
    model = _model(tree, module, function.params[0].annotation)
    scope = _scope(function, module, env, {function.params[0].name: Known(
        copy.deepcopy(dict(config)), "", model=model)})
    scope.fields = functools.partial(_field, tree)
    walk = _SizeWalk(function, scope, Path(revision.root), _stops(tree, revision, function),
                     tree, clusters)
    try:
        walk.run()
    except (RecursionError, MemoryError):
        return TreeWorldSize(None, f"{entry}.{SETUP} is nested too deeply to follow")
    value = walk.scope.names.get(name)
    where = f"{entry.rsplit('.', 1)[-1]}.{SETUP}"
    if value is None:
        return TreeWorldSize(None, f"{where} was not followed as far as it builds {name}, "
                                   f"the cluster of {driver}")
    if isinstance(value, Unknown):
        return TreeWorldSize(None, f"the size of {name}, the cluster {where} builds "
                                   f"{driver} on: {value.reason}")
    cluster = value.value
    if not isinstance(cluster, _Cluster):
        return TreeWorldSize(None, f"{name}, the cluster of {driver}, is not one {where} "
                                   "builds where the model sees it")
    reads = ", ".join(f"{path}={shown}" for path, shown in dict.fromkeys(value.reads)
                      if shown != "{...}")
    return TreeWorldSize(cluster.size, (
        f"sum({cluster.build.bundles}) at {cluster.build.where}, the cluster {driver} is "
        f"built on" + (f"; from {reads}" if reads else "")))


class _SizeWalk(_Walk):
    """The tree rules' walk of a setup, where an assignment builds a recorded cluster
    (its size bound to its local) and values come from `_Calls` (helpers run)."""

    def __init__(self, function: Function, scope: Scope, root: Path, stops: frozenset[str],
                 tree: SourceTree, clusters: list[ClusterBuild]) -> None:
        super().__init__(function, scope, root, stops)
        self.tree = tree
        self.clusters = {(c.line, c.name): c for c in clusters}

    def _starts_workers(self, stmt: ast.stmt) -> bool:
        """As the tree rules' walk has it, less a driver class named only to reach an
        attribute (`MegatronGeneration.nvlink_domain_span(cfg)`: a static helper's call
        builds no driver)."""
        bases = {id(n.value) for n in _own_nodes(stmt) if isinstance(n, ast.Attribute)}
        for node in _own_nodes(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    id(node.func.value) in bases and _called_name(node) not in self.stops:
                continue
            if isinstance(node, ast.Call) and _called_name(node) in self.stops:
                return True
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                    node.id in self.stops and node.id not in self.scope.names and \
                    id(node) not in bases:
                return True  # a local function that builds a driver, handed on
            if isinstance(node, ast.Attribute) and node.attr == WORKER_GROUP_ATTRIBUTE and \
                    isinstance(node.ctx, ast.Store):
                return True
        return False

    def _assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign,
                unsure: str | None) -> None:
        evaluator = _Calls(self.scope, self.tree, 0, self.function.module)
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(
            stmt.targets) == 1 else None
        build = self.clusters.get((stmt.lineno, target.id)) if isinstance(
            target, ast.Name) else None
        if build is not None and target is not None:
            self._bind(target, _cluster(build, evaluator), unsure)
            return
        if isinstance(stmt, ast.Assign):
            value = evaluator.value(stmt.value)
            for each in stmt.targets:
                self._bind(each, value, unsure)
            return
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._bind(stmt.target, evaluator.value(stmt.value), unsure)
            return
        load = ast.Name(stmt.target.id, ast.Load()) if isinstance(stmt.target, ast.Name) \
            else None
        if load is None:
            super()._assign(stmt, unsure)
            return
        self._bind(stmt.target, evaluator.value(ast.BinOp(left=load, op=stmt.op,
                                                          right=stmt.value)), unsure)


def _cluster(build: ClusterBuild, evaluator: Evaluator) -> Value:
    try:
        expression = ast.parse(build.bundles, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return Unknown(f"{build.bundles} does not parse")
    value = evaluator.value(expression)
    if isinstance(value, Unknown):
        return value
    counts = value.value
    if not (isinstance(counts, list | tuple) and all(
            isinstance(c, int) and not isinstance(c, bool) for c in counts)):
        return Unknown(f"{build.bundles} is {show_value(counts)}, not a list of GPU counts")
    return Known(_Cluster(sum(counts), build), None, value.reads, value.env)


_TYPES: dict[str, type | tuple[type, ...]] = {
    "dict": Mapping, "list": list, "tuple": tuple, "str": str, "int": int, "float": float,
    "bool": bool, "set": set,
}
_MUTATORS = frozenset({"add", "append", "extend", "update"})
# What a loaded config holds: an `isinstance` test on one of these is decided here.
_PLAIN = (dict, list, str, int, float, bool, type(None))
_ABCS: dict[str, type] = {f"{m}.{n}": t for m in ("typing", "collections.abc")
                          for n, t in (("Mapping", Mapping), ("Sequence", Sequence))}
# Packages whose classes no loaded config value is an instance of: the tree's own, and
# the config-model base classes (a YAML load gives dicts, lists and scalars).
_NO_CONFIG_VALUE = frozenset({"nemo_rl", "pydantic"})


class _Calls(Evaluator):
    """The tree rules' evaluator, which also runs the tree's small helpers on config
    values, and builds the lists a bundle count is written with (`[n] * nodes`)."""

    def __init__(self, scope: Scope, tree: SourceTree, depth: int, module: str) -> None:
        super().__init__(scope)
        self.tree = tree
        self.depth = depth
        self.module = module

    def _binary(self, node: ast.BinOp, depth: int) -> Value:
        if isinstance(node.op, ast.Mult):
            left, right = self.value(node.left, depth), self.value(node.right, depth)
            if isinstance(left, Known) and isinstance(right, Known):
                items, times = (left.value, right.value) if isinstance(left.value, list) \
                    else (right.value, left.value)
                if isinstance(items, list) and isinstance(times, int) and not isinstance(
                        times, bool) and 0 <= len(items) * times <= MAX_BUNDLES:
                    return Known(items * times, None, (*left.reads, *right.reads),
                                 (*left.env, *right.env))
        return super()._binary(node, depth)

    def _call(self, node: ast.Call, depth: int) -> Value:
        func = node.func
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return super()._call(node, depth)
        if isinstance(func, ast.Name) and func.id not in self.scope.names:
            builtin = self._builtin(func.id, node, depth)
            if builtin is not None:
                return builtin
        if isinstance(func, ast.Attribute) and func.attr == "get" and 1 <= len(node.args) <= 2:
            base = self.value(func.value, depth)
            if isinstance(base, Known) and base.path is None and isinstance(
                    base.value, Mapping):  # a plain dict the code built (`return {}`)
                key = self.value(node.args[0], depth)
                default: Value = self.value(node.args[1], depth) if len(
                    node.args) == 2 else Known(None)
                if isinstance(key, Known) and isinstance(default, Known):
                    try:
                        found = base.value.get(key.value, default.value)
                    except TypeError:
                        return Unknown(f"{ast.unparse(node)} has an unhashable key")
                    return Known(found, None, (*base.reads, *key.reads), base.env)
        helper = self._helper(func)
        if helper is not None and self.depth < MAX_CALL_DEPTH:
            args = [self.value(a, depth) for a in node.args]
            return _run(helper, args, self.scope.environ, self.tree, self.depth + 1)
        return super()._call(node, depth)

    def _builtin(self, name: str, node: ast.Call, depth: int) -> Value | None:
        # `isinstance(x, list)`: the type is a name, not a value.
        given = node.args[:1] if name == "isinstance" else node.args
        args = [self.value(a, depth) for a in given]
        if any(isinstance(a, Unknown) for a in args):
            return None
        known = [a for a in args if isinstance(a, Known)]
        reads = tuple(r for a in known for r in a.reads)
        if name == "isinstance" and len(node.args) == 2 and isinstance(node.args[1], ast.Name):
            kind = self._type(node.args[1].id)
            if kind is None or not isinstance(known[0].value, _PLAIN):
                return None
            return Known(isinstance(known[0].value, kind), None, reads)
        if name in ("set", "list", "tuple", "sorted", "sum", "dict") and len(known) <= 1:
            maker: Any = {"set": set, "list": list, "tuple": tuple, "sorted": sorted,
                          "sum": sum, "dict": dict}[name]
            try:
                return Known(maker(*[a.value for a in known]), None, reads)
            except Exception:
                return None
        return None

    def _type(self, name: str) -> type | tuple[type, ...] | None:
        """The type an `isinstance` names, for a value a config holds: a builtin, an ABC,
        or a class of the tree or a config model's base (which no loaded value is)."""
        dotted = self.scope.imports.get(name)
        if dotted is None:
            return _TYPES.get(name)
        if dotted in _ABCS:
            return _ABCS[dotted]
        if dotted.partition(".")[0] in _NO_CONFIG_VALUE:
            return ()  # isinstance(x, ()) is False
        return None

    def _helper(self, func: ast.expr) -> Function | None:
        """The tree's module-level function a call names: one of this module's, or one
        imported (`from x import f`, `import x as m` then `m.f`)."""
        dotted: str | None = None
        if isinstance(func, ast.Name):
            dotted = self.scope.imports.get(func.id)
            if dotted is None:
                return self._local(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id not in self.scope.names:
            base = self.scope.imports.get(func.value.id)
            dotted = f"{base}.{func.attr}" if base else None
        for _ in range(MAX_CALL_DEPTH + 1):  # a name a package re-exports, followed
            if dotted is None:
                return None
            module_name, _, name = dotted.rpartition(".")
            module = self.tree.module(module_name)
            if module is None:
                return None
            if name in module.functions:
                return module.functions[name]
            dotted = module.imports.get(name)
        return None

    def _local(self, name: str) -> Function | None:
        module = self.tree.module(self.module)
        return module.functions.get(name) if module is not None else None


class _Returned(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Stop(Exception):
    """A statement this check does not run: the call's value is unknown."""


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _run(function: Function, args: list[Value], environ: Environ, tree: SourceTree,
         depth: int) -> Value:
    """A helper's result on these arguments, its body run statement by statement."""
    name = function.qualname
    params = [p for p in function.params if p.kind in ("positional-only", "positional")]
    if "." in name or len(args) > len(params) or any(
            not p.has_default for p in params[len(args):]) or len(params) != len(
            function.params):
        return Unknown(f"it calls {name}(), code this check does not run")
    if len(args) < len(params):
        return Unknown(f"it calls {name}() with defaults this check does not read")
    module = tree.module(function.module)
    scope = Scope(names={p.name: a for p, a in zip(params, args, strict=True)},
                  environ=environ, constants=module.assignments if module else {},
                  imports=module.imports if module else {})
    runner = _Runner(_Calls(scope, tree, depth, function.module))
    try:
        runner.body(function.node.body)
    except _Returned as returned:
        return returned.value
    except (_Stop, _Break, _Continue) as stopped:
        return Unknown(f"it calls {name}(), which {stopped} this check does not run")
    return Known(None)


class _Runner:
    """Runs a helper's statements: assignments, `if`, `for` over a known sequence,
    `.add`/`.append` on a local, `return`; anything else stops it."""

    def __init__(self, evaluator: _Calls) -> None:
        self.evaluator = evaluator
        self.names = evaluator.scope.names
        self.turns = 0

    def body(self, statements: list[ast.stmt]) -> None:
        for stmt in statements:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        value = self.evaluator.value
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return  # a docstring
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Return):
            raise _Returned(value(stmt.value) if stmt.value is not None else Known(None))
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name):
            self.names[stmt.targets[0].id] = value(stmt.value)
            return
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and \
                stmt.value is not None:
            self.names[stmt.target.id] = value(stmt.value)
            return
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            self.names[stmt.target.id] = value(ast.BinOp(
                left=ast.Name(stmt.target.id, ast.Load()), op=stmt.op, right=stmt.value))
            return
        if isinstance(stmt, ast.If):
            holds = truth(value(stmt.test))
            if holds is None:
                raise _Stop(f"branches on {ast.unparse(stmt.test)}, which")
            self.body(stmt.body if holds else stmt.orelse)
            return
        if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and not stmt.orelse:
            self._loop(stmt, stmt.target.id)
            return
        if isinstance(stmt, ast.Break):
            raise _Break("breaks a loop, which")
        if isinstance(stmt, ast.Continue):
            raise _Continue("continues a loop, which")
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._mutate(stmt.value)
            return
        raise _Stop(f"runs {type(stmt).__name__} at line {stmt.lineno}, which")

    def _loop(self, stmt: ast.For, target: str) -> None:
        sequence = self.evaluator.value(stmt.iter)
        if isinstance(sequence, Unknown) or not isinstance(
                sequence.value, list | tuple | set | dict | Mapping | str):
            raise _Stop(f"loops over {ast.unparse(stmt.iter)}, which")
        for item in list(sequence.value):
            self.turns += 1
            if self.turns > MAX_ITERATIONS:
                raise _Stop("loops more than this check follows, which")
            self.names[target] = Known(item, None, sequence.reads, sequence.env)
            try:
                self.body(stmt.body)
            except _Break:
                break
            except _Continue:
                continue

    def _mutate(self, call: ast.Call) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.attr in _MUTATORS and len(call.args) == 1 and not call.keywords):
            raise _Stop(f"calls {ast.unparse(func)}(), which")
        name = func.value.id
        current, argument = self.names.get(name), self.evaluator.value(call.args[0])
        if not isinstance(current, Known) or not isinstance(argument, Known):
            self.names[name] = current if isinstance(current, Unknown) else (
                argument if isinstance(argument, Unknown) else Unknown(f"{name} is unknown"))
            return
        changed: Any = copy.copy(current.value)
        try:
            getattr(changed, func.attr)(argument.value)
        except Exception as error:
            raise _Stop(f"calls {ast.unparse(func)}() on a value it rejects, which") from error
        self.names[name] = Known(changed, None, (*current.reads, *argument.reads),
                                 (*current.env, *argument.env))
