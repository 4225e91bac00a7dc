"""Syntax the interpreter has no case for: undecided for users, an error in the tests.

Every statement and expression node type the walk and the evaluator meet is either
handled or deliberately not computed (a comprehension, a lambda: "not a value this
check computes"). A node of any other type (a `match` statement, a `try`/`except*`, a
type the next Python adds) is an unknown shape: what it holds is undecided, with the
reason, and with `NEMO_RL_WORKERS_STRICT=1` in the environment (the test suite sets it)
`UnknownShape` is raised instead, so a shape the interpreter skips is seen, not passed.
"""

from __future__ import annotations

import ast
import os

STRICT_ENV = "NEMO_RL_WORKERS_STRICT"


class UnknownShape(Exception):
    """A node type the interpreter has no case for (strict mode only)."""


def strict_mode() -> bool:
    """Whether an unknown shape raises (`NEMO_RL_WORKERS_STRICT=1`)."""
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def unknown_shape(node: ast.AST, where: str) -> str:
    """The reason a node of a type the interpreter has no case for is undecided; in
    strict mode, `UnknownShape` naming it and where it is."""
    kind = type(node).__name__
    line = getattr(node, "lineno", None)
    place = f"{where}:{line}" if line is not None else where
    if strict_mode():
        raise UnknownShape(f"{place}: the interpreter has no case for a {kind} node")
    return f"it holds a {kind} at {place}, a shape this check does not follow"


__all__ = ["STRICT_ENV", "UnknownShape", "strict_mode", "unknown_shape"]
