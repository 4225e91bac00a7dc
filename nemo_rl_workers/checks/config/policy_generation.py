"""Where a NeMo-RL tree generates with the policy's own workers (`backend: megatron`).

That mode starts no generation worker group: the policy's workers generate. Trees say so
in one of two ways, both read from the source model (never imported):

- a generation driver that starts no worker class of its own and takes the policy driver
  (`MegatronGeneration(config, ..., policy: Optional["Policy"])`, 2026 trees): its
  workers are that policy's;
- no generation driver for the backend, but an algorithm's entry code branches on it
  (`if backend == "megatron": policy_generation = None`, 2025 trees), setting a name to
  None there and constructing no class, and the policy driver calls `generate` on its own
  workers.

Anything else leaves the section undecided, as before.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nemo_rl_workers.tree.revision import Revision
    from nemo_rl_workers.tree.source import Function, SourceTree

ALGORITHMS = "nemo_rl.algorithms"
BACKEND_KEY = "backend"
GENERATE = "generate"


def policy_generates(revision: Revision, backend: str, driver: str | None,
                     policy_driver: str) -> str | None:
    """Why the tree's policy workers generate for `backend` (with file:line), or None.
    `driver`: the generation driver the backend names, if any (it starts no worker of its
    own); `policy_driver`: the driver of the policy section."""
    if revision.root is None:
        return None
    from nemo_rl_workers.tree.source_kept import tree_source

    tree = tree_source(revision.root)
    root = Path(revision.root)
    if driver is not None:
        return _takes_the_policy(tree, revision, driver, policy_driver, root)
    if GENERATE not in revision.calls.get(policy_driver, ()):
        return None
    generation_drivers = {name for name, role in revision.drivers.items()
                          if role == "generation"}
    for name in sorted(n for n in {*tree.modules, *tree.pending}
                       if n.startswith(f"{ALGORITHMS}.")):
        module = tree.module(name)
        if module is None:
            continue
        for function in module.functions.values():
            where = _branch_without_driver(function, backend, generation_drivers)
            if where is not None:
                return (f"under `{where[1]}` at {_relative(function.file, root)}:{where[0]} "
                        f"the tree builds no generation driver, and {policy_driver} calls "
                        f"{GENERATE} on its own workers")
    return None


def _takes_the_policy(tree: SourceTree, revision: Revision, driver: str, policy_driver: str,
                      root: Path) -> str | None:
    fqn = revision.driver_fqns.get(driver)
    if fqn is None:
        return None
    module_name, _, name = fqn.rpartition(".")
    module = tree.module(module_name)
    info = module.classes.get(name) if module is not None else None
    init = info.methods.get("__init__") if info is not None else None
    if init is None:
        return None
    for param in init.bound_params():
        annotation = param.annotation or ""
        names = {n.strip("'\" ") for n in annotation.replace("[", " ").replace("]", " ")
                 .replace("|", " ").replace(",", " ").split()}
        if policy_driver in names:
            return (f"{driver} takes the {policy_driver} ({param.name}: {annotation}, "
                    f"{_relative(init.file, root)}:{init.line}) and starts no worker class "
                    "of its own")
    return None


def _branch_without_driver(function: Function, backend: str,
                           drivers: set[str]) -> tuple[int, str] | None:
    """(line, test) of an `if` in `function` that holds where the generation backend is
    `backend` and builds none of `drivers` in its body."""
    for node in ast.walk(function.node):
        if not isinstance(node, ast.If) or not _tests_backend(node.test, backend, function):
            continue
        inside = [sub for stmt in node.body for sub in ast.walk(stmt)]
        built = {name for name in map(_called, inside) if name is not None}
        # Its generation is None there (`policy_generation = None`), and it constructs no
        # class at all: neither a driver this model knows nor one it does not (Dynamo's).
        none = any(isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Constant)
                   and sub.value.value is None for sub in inside)
        if none and not built & drivers and not any(n[:1].isupper() for n in built):
            return node.lineno, ast.unparse(node.test)
    return None


def _tests_backend(test: ast.expr, backend: str, function: Function) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    return (isinstance(right, ast.Constant) and right.value == backend
            and _reads_backend(left, function))


def _reads_backend(node: ast.expr, function: Function) -> bool:
    """`cfg["generation"]["backend"]`, or a local assigned once from such a read."""
    if isinstance(node, ast.Name):
        assigned = function.assignments.get(node.id, [])
        return len(assigned) == 1 and _reads_backend(assigned[0].value, function)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value == BACKEND_KEY
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant):
        return node.args[0].value == BACKEND_KEY
    return False


def _called(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else None)


def _relative(file: str, root: Path) -> str:
    try:
        return str(Path(file).resolve().relative_to(root.resolve()))
    except ValueError:
        return file
