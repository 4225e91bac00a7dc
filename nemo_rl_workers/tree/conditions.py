"""Which config switches hold where a call is made or a worker class is chosen.

A condition is a set of (switch, value) pairs that all hold (see `knowledge.SWITCHES`).
Only tests that read a known switch count; any other test is no condition at all,
so a call under an unknown test is checked against every class its driver can start.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from nemo_rl_workers.tree.knowledge import SWITCHES
from nemo_rl_workers.tree.source import Function, Guard

Condition = frozenset[tuple[str, bool]]
ALWAYS: Condition = frozenset()
MAX_DEPTH = 4


def key_chain(node: ast.expr) -> list[str]:
    """The string keys of a `a["x"].get("y", d)["z"]` chain, outermost last."""
    keys: list[str] = []
    current: ast.expr = node
    while True:
        if isinstance(current, ast.Subscript):
            if isinstance(current.slice, ast.Constant) and isinstance(current.slice.value, str):
                keys.append(current.slice.value)
            current = current.value
        elif (isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute)
              and current.func.attr == "get" and current.args):
            first = current.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                keys.append(first.value)
            current = current.func.value
        else:
            return list(reversed(keys))


def switch_of(node: ast.expr, function: Function | None, depth: int = 0) -> str | None:
    """The switch an expression reads, or None."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool" \
            and len(node.args) == 1:
        return switch_of(node.args[0], function, depth + 1)
    keys = key_chain(node)
    for name, switch in SWITCHES.items():
        if len(keys) >= len(switch.keys) and tuple(keys[-len(switch.keys):]) == switch.keys:
            return name
    if isinstance(node, ast.Attribute):
        return next((n for n, s in SWITCHES.items() if node.attr in s.names), None)
    if isinstance(node, ast.Name):
        assigned = function.assignments.get(node.id, []) if function is not None else []
        if len(assigned) == 1:
            found = switch_of(assigned[0].value, function, depth + 1)
            if found is not None:
                return found
        return next((n for n, s in SWITCHES.items() if node.id in s.names), None)
    return None


def test_holds(
    test: ast.expr, holds: bool, function: Function | None, depth: int = 0
) -> set[tuple[str, bool]]:
    """The switch values implied by `test` evaluating truthy (`holds`) or falsy."""
    if depth > MAX_DEPTH:
        return set()
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test_holds(test.operand, not holds, function, depth + 1)
    if isinstance(test, ast.BoolOp):
        conjunctive = isinstance(test.op, ast.And) == holds  # `a and b` true, `a or b` false
        if not conjunctive:
            return set()
        out: set[tuple[str, bool]] = set()
        for value in test.values:
            out |= test_holds(value, holds, function, depth + 1)
        return out
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
        test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, bool):
        op, constant = test.ops[0], test.comparators[0].value
        if isinstance(op, (ast.Is, ast.Eq)):
            return test_holds(test.left, holds == constant, function, depth + 1)
        if isinstance(op, (ast.IsNot, ast.NotEq)):
            return test_holds(test.left, holds != constant, function, depth + 1)
        return set()
    switch = switch_of(test, function, depth)
    return {(switch, holds)} if switch is not None else set()


def condition_of(guards: Iterable[Guard], function: Function | None) -> Condition:
    out: set[tuple[str, bool]] = set()
    for guard in guards:
        out |= test_holds(guard.test, guard.holds, function)
    return frozenset(out)


def conflicts(a: Condition, b: Condition) -> bool:
    """Whether two conditions cannot both hold (one switch, two values)."""
    return any((name, not value) in b for name, value in a)


def contradictory(condition: Condition) -> bool:
    return conflicts(condition, condition)


def restrict(condition: Condition, switches: Iterable[str]) -> Condition:
    """Only the switches that matter (those the driver chooses its class by)."""
    keep = set(switches)
    return frozenset(pair for pair in condition if pair[0] in keep)


def describe(condition: Condition) -> str:
    return " and ".join(f"{name}={'true' if value else 'false'}"
                        for name, value in sorted(condition))


Alternatives = tuple[Condition, ...]
"""Conditions joined by "or": any one of them holding is enough; () is no condition (the
call fails whatever the switches)."""


def either(conditions: Iterable[Condition]) -> Alternatives:
    """`conditions` joined by "or", simplified: two that differ only in one switch's value
    are one without it (`x=true` or `x=false` is always), and one that always holds makes
    the whole always (()). In the order `describe` sorts them."""
    terms = set(conditions)
    changed = True
    while changed:
        changed = False
        for a in list(terms):
            for b in list(terms):
                diff = a ^ b
                if len(diff) == 2 and len({name for name, _ in diff}) == 1:
                    terms -= {a, b}
                    terms.add(a & b)
                    changed = True
                    break
            if changed:
                break
    if ALWAYS in terms:
        return ()
    return tuple(sorted(terms, key=describe))


def describe_either(alternatives: Alternatives) -> str:
    """`a=true and b=false`, or alternatives of those joined by ` or `, each with more than
    one switch in parentheses; "" for no condition."""
    described = [describe(c) for c in alternatives]
    if len(described) == 1:
        return described[0]
    return " or ".join(f"({d})" if " and " in d else d for d in described)


def compatible(alternatives: Alternatives, values: Mapping[str, bool]) -> bool:
    """Whether one of the alternatives can hold where a section set `values` (a switch
    it does not set may take either value)."""
    return not alternatives or any(
        all(values.get(name, value) == value for name, value in condition)
        for condition in alternatives)
