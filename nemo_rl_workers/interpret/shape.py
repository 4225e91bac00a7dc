"""What is derived once per statement of the tree, whatever the config.

A walk runs the same bodies for every config; only the values differ. The nodes a
statement holds (not entering the functions it defines), the calls in it, whether it
holds an early exit, which of its calls and names start workers for a set of stop
names: these depend on the source alone, so they are derived the first time a walk asks
and kept for the life of the source model (held by the statement's own node, which the
model keeps), never again by `ast.walk` for the next config.
"""

from __future__ import annotations

import ast
from collections.abc import Container
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nemo_rl_workers.tree.knowledge import WORKER_GROUP_ATTRIBUTE
from nemo_rl_workers.tree.source.resolve import own_nodes

if TYPE_CHECKING:
    from nemo_rl_workers.tree.source import Function

_EXITS = (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom, ast.Try)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Kept on the node itself: the model keeps the node as long as a walk can ask about it,
# and a node of another model (another tree, a test's) never shares its answers.
_SHAPE = "_nemo_rl_workers_shape"


@dataclass(frozen=True)
class Starts:
    """Whether a statement starts workers, for one set of stop names: `surely`, or where
    one of `mentioned` (a local function that builds a driver, handed on) is not a name
    the walk has bound."""

    surely: bool
    mentioned: frozenset[str]

    def holds(self, bound: Container[str]) -> bool:
        return self.surely or any(name not in bound for name in self.mentioned)


@dataclass
class StatementShape:
    """One statement's nodes and what follows from them alone."""

    nodes: tuple[ast.AST, ...]
    calls: tuple[ast.Call, ...]
    exits: bool  # holds a break, continue, return, yield or try: not run turn by turn
    starts: dict[tuple[frozenset[str], bool], Starts]


def shape_of(stmt: ast.AST) -> StatementShape:
    """The statement's shape, derived the first time it is asked for."""
    found: StatementShape | None = getattr(stmt, _SHAPE, None)
    if found is None:
        nodes = tuple(own_nodes(stmt))
        found = StatementShape(nodes, tuple(n for n in nodes if isinstance(n, ast.Call)),
                               any(isinstance(n, _EXITS) for n in nodes), {})
        setattr(stmt, _SHAPE, found)
    return found


def called_name(node: ast.AST) -> str | None:
    """The name a call calls (`f(...)`, `x.f(...)`: `f`), else None."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else None)


def starts(stmt: ast.stmt, stops: frozenset[str], static_calls_start: bool) -> Starts:
    """Which of the statement's nodes start workers, for `stops`: a call of a stop, a
    store of the driver's worker group, or a stop's name handed on. Where
    `static_calls_start` is False, a stop named only to reach an attribute of it
    (`MegatronGeneration.nvlink_domain_span(cfg)`) does not start them."""
    shape = shape_of(stmt)
    key = (stops, static_calls_start)
    found = shape.starts.get(key)
    if found is not None:
        return found
    bases = set() if static_calls_start else {
        id(n.value) for n in shape.nodes if isinstance(n, ast.Attribute)}
    surely, mentioned = False, set()
    for node in shape.nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                id(node.func.value) in bases and called_name(node) not in stops:
            continue
        if isinstance(node, ast.Call) and called_name(node) in stops:
            surely = True
            break
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                node.id in stops and id(node) not in bases:
            mentioned.add(node.id)
        if isinstance(node, ast.Attribute) and node.attr == WORKER_GROUP_ATTRIBUTE and \
                isinstance(node.ctx, ast.Store):
            surely = True
            break
    found = Starts(surely, frozenset(mentioned))
    shape.starts[key] = found
    return found


_LOCAL_BUILDERS = "_nemo_rl_workers_local_builders"
_ALL_CALLS = "_nemo_rl_workers_all_calls"


def all_calls(function: Function) -> tuple[ast.Call, ...]:
    """Every call written in `function`, in the functions it defines too."""
    found: tuple[ast.Call, ...] | None = getattr(function.node, _ALL_CALLS, None)
    if found is None:
        found = tuple(n for n in ast.walk(function.node) if isinstance(n, ast.Call))
        setattr(function.node, _ALL_CALLS, found)
    return found


def local_builders(function: Function, drivers: frozenset[str]) -> frozenset[str]:
    """The functions `function` defines (at any depth) that call one of `drivers`."""
    kept: dict[frozenset[str], frozenset[str]] | None = getattr(function.node,
                                                                 _LOCAL_BUILDERS, None)
    if kept is None:
        kept = {}
        setattr(function.node, _LOCAL_BUILDERS, kept)
    found = kept.get(drivers)
    if found is None:
        found = frozenset(
            node.name for node in ast.walk(function.node)
            if isinstance(node, _FUNCTIONS) and node is not function.node and any(
                called_name(sub) in drivers for sub in ast.walk(node)))
        kept[drivers] = found
    return found


__all__ = ["StatementShape", "Starts", "all_calls", "called_name", "local_builders", "shape_of",
           "starts"]
