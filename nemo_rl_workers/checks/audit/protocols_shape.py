"""What a module `audit --emit-protocols` writes may hold, and nothing else.

The emitted text runs in other processes (mypy's and pyrefly's reading of OUT.py, the
guard's check in the workers' interpreter, where a cached copy is imported as a module),
so it is checked by shape before it is written or sent: a docstring, imports, and classes
of docstrings and `...`-bodied methods. The standard library alone: the guard checks a
cached Protocol on a program's first worker group and imports no more than this for it.
"""

from __future__ import annotations

import ast


class EmitError(ValueError):
    """OUT.py cannot be written; `str()` is one line."""


_ANNOTATION_NODES = (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.BinOp,
                     ast.BitOr, ast.Constant, ast.Load)
_DECORATORS = frozenset({"staticmethod", "classmethod"})


def check_emitted(text: str) -> None:
    """Refuse (EmitError) a module that is anything but what `emission` means to write: a
    docstring, imports, and classes of docstrings and `...`-bodied methods whose annotations
    are names, subscripts, unions and constants, and whose defaults are `...`. Nothing in it
    can run a statement when it is imported."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as err:
        raise EmitError(f"--emit-protocols: the generated module does not parse ({err})") \
            from err

    def refuse(node: ast.AST) -> EmitError:
        line = getattr(node, "lineno", "?")
        return EmitError(f"--emit-protocols: the generated module holds a "
                         f"{type(node).__name__} at line {line}; not written")

    def docstring(node: ast.stmt) -> bool:
        return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str))

    def annotation(node: ast.expr | None) -> None:
        for part in ast.walk(node) if node is not None else ():
            if not isinstance(part, _ANNOTATION_NODES):
                raise refuse(part)

    def method(node: ast.stmt) -> None:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise refuse(node)
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Name) and decorator.id in _DECORATORS):
                raise refuse(decorator)
        body = node.body
        if not (len(body) == 1 and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and body[0].value.value is ...):
            raise refuse(body[0])
        args = node.args
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            if not (isinstance(default, ast.Constant) and default.value is ...):
                raise refuse(default)
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                    *(a for a in (args.vararg, args.kwarg) if a is not None)]:
            annotation(arg.annotation)
        annotation(node.returns)

    for index, node in enumerate(tree.body):
        if index == 0 and docstring(node):
            continue
        if isinstance(node, ast.ImportFrom):
            continue
        if not isinstance(node, ast.ClassDef) or node.decorator_list or node.keywords or [
                ast.unparse(b) for b in node.bases] != ["Protocol"]:
            raise refuse(node)
        for index_in_class, member in enumerate(node.body):
            if not (index_in_class == 0 and docstring(member)):
                method(member)


__all__ = ["EmitError", "check_emitted"]
