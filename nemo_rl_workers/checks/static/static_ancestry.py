"""Which name in a class's ancestry the source cannot resolve, for `--static`'s undecided verdicts.

A type checker takes a class it cannot find (its module is not on the path: a fork's
worker, a package not installed here) as `Any`, and a class inheriting from `Any` as
having every member: every Protocol check then passes. `static_check` asks the checker
whether that happened (a probe line that must be an error for any known class); this
module says *why*, read from source as the checker would find it (`locate`), importing
nothing: the first name, walking the class and then its bases depth-first, whose module
cannot be found, or that its module does not define.
"""

from __future__ import annotations

import builtins
import sys

from nemo_rl_workers.tree.source.demand import DemandTree, demand_tree, find_class
from nemo_rl_workers.tree.source.lookup import ImportRoots
from nemo_rl_workers.tree.source.resolve import base_names

MAX_CLASSES = 200
"""Classes walked for one question at most (real hierarchies stay under 20)."""


def unresolved(tree: DemandTree, fqn: str) -> str | None:
    """Why `fqn` or a class it inherits from cannot be resolved from source in `tree`, or
    None."""
    todo: list[tuple[str, str | None]] = [(fqn, None)]  # (name, the class naming it)
    seen: set[str] = set()
    while todo and len(seen) < MAX_CLASSES:
        name, child = todo.pop()
        if name in seen or _known_elsewhere(name):
            continue
        seen.add(name)
        found = find_class(tree, name)
        if isinstance(found, str):
            what = f"{name}" if child is None else f"base {name} (of {child})"
            return f"{what} cannot be resolved here: {found}"
        todo.extend((base, found.fqn) for base in reversed(base_names(tree, found)))
    return None


def _known_elsewhere(name: str) -> bool:
    """Builtins and the standard library: the checkers know them from typeshed."""
    top = name.split(".")[0]
    return ("." not in name and hasattr(builtins, name)) or top in sys.stdlib_module_names


def unresolved_ancestor(fqn: str, roots: ImportRoots) -> str | None:
    """Why `fqn`, or a class in its ancestry, cannot be resolved along `roots`; None when
    every one is found in source."""
    return unresolved(demand_tree(roots), fqn)
