"""A helper's test written out where it is called: what a guard on a helper's result means.

`if _use_gym(master_config):` tests nothing the config tests can read, but a helper whose
body is one `return EXPR` (`return cfg["env"]["nemo_gym"]["enabled"]`) tests EXPR with its
parameters bound to the call's arguments. `inlined` gives the guard with each such call
replaced by EXPR, parameters replaced by the argument expressions (read in the caller,
whose locals they name), and the helper's module constants (`MEGATRON_BACKEND =
"megatron"`, imported ones too) by their literal values; the same substitution gives a
factory's guards (`if generation_backend == MEGATRON_BACKEND: return X(...)`) in its
caller's terms. A helper of any other shape, or whose EXPR reads a name that is neither a
parameter nor a constant, is left as the call it is (the guard stays undecided).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping

from nemo_rl_workers.tree.source import Function, SourceTree, resolve_local

MAX_INLINE_DEPTH = 3  # helpers calling helpers
# Names a written-out test may keep: literals and the builtins the config tests read.
KNOWN_NAMES = frozenset({"True", "False", "None", "bool"})


def inlined(test: ast.expr, function: Function, tree: SourceTree, depth: int = 0) -> ast.expr:
    """`test` (in `function`) with calls of one-`return` helpers written out."""
    if depth >= MAX_INLINE_DEPTH:
        return test

    class _Calls(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            helper = helper_of(node.func, function, tree)
            if helper is None:
                return node
            body = _returned(helper)
            bound = bind(helper, node) if body is not None else None
            if body is None or bound is None:
                return node
            written = substituted(body, helper, tree, bound)
            if written is None:
                return node
            return _at(inlined(written, helper, tree, depth + 1), node)

    try:
        return _Calls().visit(copy.deepcopy(test))  # type: ignore[no-any-return]  # an expr in, an expr out
    except RecursionError:  # a test nested past what can be copied: left as written
        return test


def bind(helper: Function, call: ast.Call) -> dict[str, ast.expr] | None:
    """The helper's parameters -> the call's argument expressions (literal defaults where
    not given); None where the call unpacks `*args`/`**kwargs`."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    args = helper.node.args
    positional = [*args.posonlyargs, *args.args]
    if positional and positional[0].arg in ("self", "cls") and "." in helper.qualname:
        positional = positional[1:]
    bound: dict[str, ast.expr] = {}
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):],
                        args.defaults, strict=True))
    for param, value in zip(positional, call.args, strict=False):
        bound[param.arg] = value
    for keyword in call.keywords:
        if keyword.arg is not None:
            bound[keyword.arg] = keyword.value
    for name, default in defaults.items():
        if name not in bound and isinstance(default, ast.Constant):
            bound[name] = default
    return bound


def substituted(node: ast.expr, helper: Function, tree: SourceTree,
                bound: Mapping[str, ast.expr]) -> ast.expr | None:
    """`node` of the helper's body with its parameters bound and its module's constants
    as literals; None where it reads any other name (a local of the helper)."""
    unknown: list[str] = []

    class _Names(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in bound:
                return copy.deepcopy(bound[node.id])
            literal = _constant(helper, tree, node.id)
            if literal is not None:
                return ast.copy_location(ast.Constant(literal.value), node)
            if node.id not in KNOWN_NAMES:
                unknown.append(node.id)
            return node

    out = _Names().visit(copy.deepcopy(node))
    return None if unknown or not isinstance(out, ast.expr) else out


def helper_of(func: ast.expr, function: Function, tree: SourceTree) -> Function | None:
    """The tree's module-level function a called name refers to."""
    if not isinstance(func, ast.Name):
        return None
    module = tree.module(function.module)
    if module is None:
        return None
    if func.id in function.assignments or any(p.name == func.id for p in function.params):
        return None
    return function_named(tree, resolve_local(module, func.id))


def function_named(tree: SourceTree, fqn: str) -> Function | None:
    """The module-level function `pkg.mod.f`, modelling its module if pending."""
    module_name, _, name = fqn.rpartition(".")
    module = tree.module(module_name) if module_name else None
    return module.functions.get(name) if module is not None else None


def _returned(helper: Function) -> ast.expr | None:
    """EXPR of a body that is (after a docstring) one `return EXPR`."""
    body = list(helper.node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    return None


def _constant(helper: Function, tree: SourceTree, name: str) -> ast.Constant | None:
    """The literal a name of the helper's module is bound to (`X = "lit"` there, or
    imported from where it is), None where it is not one."""
    module = tree.module(helper.module)
    if module is None:
        return None
    value = module.assignments.get(name)
    if value is None and name in module.imports:
        source, _, attr = module.imports[name].rpartition(".")
        imported = tree.module(source) if source else None
        value = imported.assignments.get(attr) if imported is not None else None
    return value if isinstance(value, ast.Constant) else None


def _at(node: ast.expr, where: ast.AST) -> ast.expr:
    """`node` placed at `where`'s line: a test written out is where the call is."""
    for child in ast.walk(node):
        if hasattr(child, "lineno"):
            child.lineno = where.lineno  # type: ignore[attr-defined]  # every expr has one
            child.end_lineno = where.end_lineno  # type: ignore[attr-defined]
    return node
