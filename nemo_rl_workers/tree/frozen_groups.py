"""What a driver clears on its own copy of the config before it builds its workers.

A frozen group (on-policy distillation's `TeacherWorkerGroup`) builds a policy config of
its own from the student's: `cfg = deepcopy(policy_config)`, then `cfg["quant_cfg"] =
None` ("quantization is not supported for teachers"). Its workers are then the unquantized
class whatever the student's `quant_cfg` says, so the table must not give that driver's
rows a quantized counterpart. Read from the driver's `__init__` in the source model
(nothing imported): each key path of a local deep copy that is set to None, deleted or
popped. No key is known by name here; the revision builder applies the one that selects
the quantized class (`knowledge.QUANT_KEY`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from nemo_rl_workers.tree.drivers import Driver
from nemo_rl_workers.tree.source import Function, SourceTree

COPIERS = frozenset({"deepcopy", "copy"})  # `copy.deepcopy(x)`, `deepcopy(x)`, `x.copy()`


def cleared_keys(tree: SourceTree, drivers: Iterable[Driver]) -> dict[str, tuple[str, ...]]:
    """Driver name -> the key paths its constructor clears on a copy it owns, sorted."""
    out: dict[str, tuple[str, ...]] = {}
    for driver in sorted(drivers, key=lambda d: d.fqn):
        info = tree.classes.get(driver.fqn)
        function = info.methods.get("__init__") if info is not None else None
        if function is None:
            continue
        found = _cleared(function)
        if found:
            out[driver.name] = tuple(sorted(found))
    return out


def _cleared(function: Function) -> set[str]:
    copies = {name for name, assigned in function.assignments.items()
              if len(assigned) == 1 and _copies(assigned[0].value)}
    found: set[str] = set()
    for node in ast.walk(function.node):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                node.value.value is None:
            found.update(p for t in node.targets if (p := _path(t, copies)))
        elif isinstance(node, ast.Delete):
            found.update(p for t in node.targets if (p := _path(t, copies)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "pop" and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            above = _path(node.func.value, copies, allow_root=True)
            if above is not None:
                found.add(f"{above}.{node.args[0].value}" if above else node.args[0].value)
    return found


def _copies(value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else "")
    return name in COPIERS


def _path(node: ast.expr, copies: set[str], allow_root: bool = False) -> str | None:
    """`cfg["a"]["b"]` -> "a.b" where `cfg` is a local copy; None otherwise."""
    keys: list[str] = []
    while isinstance(node, ast.Subscript):
        if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            return None
        keys.append(node.slice.value)
        node = node.value
    if not (isinstance(node, ast.Name) and node.id in copies) or not (keys or allow_root):
        return None
    return ".".join(reversed(keys))
