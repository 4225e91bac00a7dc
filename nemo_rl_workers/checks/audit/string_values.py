"""The strings an expression can evaluate to, from the source model alone.

Used where a tree names classes or methods with strings built in code:
`"pkg.mod." "Name"`, `"a" if cond else "b"`, `prefix + name` where `name` is a local
assigned (and `+=`-extended) under conditions, a module constant, or a parameter whose
callers pass literals. `None` means "cannot tell" (the caller lists it as unresolved),
never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nemo_rl_workers.tree.source import ClassInfo, Function, Module, SourceTree

MAX_DEPTH = 8
MAX_VALUES = 64


def functions_of(tree: SourceTree) -> Iterator[tuple[Module, ClassInfo | None, Function]]:
    """Every module-level function and method of a top-level or nested class."""
    for module in list(tree.modules.values()):
        for function in module.functions.values():
            yield module, None, function
    for info in list(tree.classes.values()):
        owner = tree.modules.get(info.module)
        if owner is None:
            continue
        for function in info.methods.values():
            yield owner, info, function


def values(
    node: ast.expr, module: Module, function: Function | None, depth: int = 0
) -> set[str] | None:
    """Every string `node` can be, or None when some value cannot be told."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, ast.Constant):
        return {node.value} if isinstance(node.value, str) else None
    if isinstance(node, ast.IfExp):
        return _union(values(node.body, module, function, depth + 1),
                      values(node.orelse, module, function, depth + 1))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = values(node.left, module, function, depth + 1)
        right = values(node.right, module, function, depth + 1)
        if left is None or right is None or len(left) * len(right) > MAX_VALUES:
            return None
        return {a + b for a in left for b in right}
    if isinstance(node, ast.Name):
        return _name(node.id, module, function, depth)
    return None


def _union(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    return None if a is None or b is None else a | b


def _name(name: str, module: Module, function: Function | None, depth: int) -> set[str] | None:
    if function is not None and name in function.assignments:
        out: set[str] = set()
        for assignment in function.assignments[name]:
            found = values(assignment.value, module, function, depth + 1)
            if found is None:
                return None
            out |= found
        # `name += "suffix"` (under a condition, typically): both spellings are possible.
        for suffix_node in _augmented(function, name):
            suffixes = values(suffix_node, module, function, depth + 1)
            if suffixes is None:
                return None
            out |= {v + s for v in out for s in suffixes}
        return out if len(out) <= MAX_VALUES else None
    if function is not None and any(p.name == name for p in function.params):
        return None  # a parameter: see `parameter_values`
    if name in module.assignments:
        return values(module.assignments[name], module, None, depth + 1)
    return None


def _augmented(function: Function, name: str) -> list[ast.expr]:
    return [
        node.value
        for node in ast.walk(function.node)
        if isinstance(node, ast.AugAssign)
        and isinstance(node.op, ast.Add)
        and isinstance(node.target, ast.Name)
        and node.target.id == name
    ]


def parameter_index(function: Function, name: str) -> tuple[int | None, bool]:
    """(position among the caller's arguments, or None; whether it can be a keyword)."""
    for index, param in enumerate(function.bound_params()):
        if param.name == name:
            positional = param.kind in ("positional-only", "positional")
            return (index if positional else None), param.kind != "positional-only"
    return None, False
