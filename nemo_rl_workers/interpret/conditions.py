"""The config tests on the way to a call, kept to be judged against one config later.

The audit's switches (`conditions`) are the few booleans a driver chooses its worker by;
a config-scoped run (`check RECIPE`) also asks the other tests a caller makes before a
call: `if backend == "megatron":` where `backend = master_config["policy"]["generation"]
["backend"]`, `if cfg["weight_sync"]["enabled"]:`, `assert x is not None`. A test is
kept as the key path it reads (a suffix of the value's path in the config: `generation.
backend` read from a local `generation_config`), the comparison and the literal(s); a
config contradicts it when every value of that config at a path ending so makes it come
out the other way. A test that reads no key path, or compares with no literal, is not
kept (it excludes nothing).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from nemo_rl_workers.tree.source import Function, Guard

Literal_: TypeAlias = str | bool | int | float | None
Op: TypeAlias = Literal["==", "in", "truthy", "is None"]
MAX_DEPTH = 4
MAX_CONFIG_DEPTH = 8
MAX_SHOWN = 3  # values named in a reason
MAX_VALUE_CHARS = 40


MAX_TEST_CHARS = 80


def _short_text(text: str) -> str:
    return text if len(text) <= MAX_TEST_CHARS else text[: MAX_TEST_CHARS - 3] + "..."


def short_value(value: Any) -> str:
    text = repr(value) if not isinstance(value, Mapping) else "{...}"
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


@dataclass(frozen=True)
class ConfigTest:
    """`keys` compared by `op` with `values` comes out `holds` at the call."""

    keys: tuple[str, ...]
    op: Op
    values: tuple[Literal_, ...]
    holds: bool
    where: str  # file:line of the test
    text: str  # the test as written
    # What the read gives where the config has no such key: `.get("k")` None, `.get("k",
    # d)` d; empty when it is a subscript (a KeyError, or a key path read from an object
    # the config does not show: no verdict).
    absent: tuple[Literal_, ...] = ()
    # Whether the call runs where `text`, as written, is true (False: where it is false,
    # as in an `else:` or an `elif` after it), so a reason names the branch taken.
    as_written: bool = True

    def needs(self) -> str:
        """What the call runs under, in words, naming the test as written."""
        if self.as_written:
            return f"only under {self.where} ({self.text})"
        return f"only where {self.where} ({self.text}) is false"

    def verdict(self, config: Mapping[str, Any]) -> bool | None:
        """False when the config makes the test come out the other way wherever its key
        path is, True when somewhere it agrees, None when the config has no such path
        (and the read has no default)."""
        found = list(_values_at(config, self.keys))
        if not found:
            if not self.absent:
                return None
            found = [self.absent[0]]
        return any(self._outcome(value) == self.holds for value in found)

    def _outcome(self, value: Any) -> bool:
        if self.op == "==":
            return bool(value == self.values[0])
        if self.op == "in":
            return value in self.values
        if self.op == "is None":
            return value is None
        return bool(value)

    def given(self, config: Mapping[str, Any]) -> str:
        """The values the config has at the key path, as `path=value` (each shortened:
        a block or a long string is not the point)."""
        shown = [f"{path}={short_value(value)}" for path, value in _paths_at(config, self.keys, ())]
        if len(shown) > MAX_SHOWN:
            shown = [*shown[:MAX_SHOWN], f"and {len(shown) - MAX_SHOWN} more"]
        return ", ".join(shown) or f"no {'.'.join(self.keys)} (so {self.absent[0]!r})"


@dataclass(frozen=True)
class Origin:
    """A call a finding is reached from (file:line), and the config tests on the way."""

    where: str
    tests: tuple[ConfigTest, ...] = ()


def first_failed(tests: Iterable[ConfigTest],
                 fails: Callable[[ConfigTest], bool]) -> ConfigTest | None:
    """The test to name of those the config fails: the branch's own test (an `elif`'s,
    as written) before an earlier branch's, which the call needs false."""
    failed = [test for test in tests if fails(test)]
    return next((t for t in failed if t.as_written), failed[0] if failed else None)


def config_tests(guards: Iterable[Guard], function: Function | None,
                 file: str) -> tuple[ConfigTest, ...]:
    out: list[ConfigTest] = []
    for guard in guards:
        out.extend(_tests(guard.test, guard.holds, function, file, 0))
    return tuple(dict.fromkeys(out))


def _tests(test: ast.expr, holds: bool, function: Function | None, file: str,
           depth: int) -> Iterator[ConfigTest]:
    if depth > MAX_DEPTH:
        return
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _tests(test.operand, not holds, function, file, depth + 1)
        return
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And) == holds:  # `a and b` true, `a or b` false: each
            for value in test.values:
                yield from _tests(value, holds, function, file, depth + 1)
        return
    where, text = f"{file}:{test.lineno}", _short_text(ast.unparse(test))
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        keys, absent = _read(left, function)
        literal = _literals(right)
        if not keys:  # `"megatron" == backend`
            (keys, absent), literal = _read(right, function), _literals(left)
        if not keys or literal is None:
            return
        if isinstance(op, (ast.Eq, ast.NotEq)) and len(literal) == 1:
            yield ConfigTest(keys, "==", literal, holds == isinstance(op, ast.Eq), where, text,
                             absent, holds)
        elif isinstance(op, (ast.Is, ast.IsNot)) and literal == (None,):
            yield ConfigTest(keys, "is None", (), holds == isinstance(op, ast.Is), where, text,
                             absent, holds)
        elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List,
                                                                           ast.Set)):
            yield ConfigTest(keys, "in", literal, holds == isinstance(op, ast.In), where, text,
                             absent, holds)
        return
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and \
            test.func.id == "bool" and len(test.args) == 1:
        test = test.args[0]
    keys, absent = _read(test, function)
    if keys:
        yield ConfigTest(keys, "truthy", (), holds, where, text, absent, holds)


def _literals(node: ast.expr) -> tuple[Literal_, ...] | None:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(
            node.value, (str, bool, int, float))):
        return (node.value,)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out: list[Literal_] = []
        for element in node.elts:
            found = _literals(element)
            if found is None or len(found) != 1:
                return None
            out.extend(found)
        return tuple(out)
    return None


def _read(node: ast.expr, function: Function | None) -> tuple[tuple[str, ...],
                                                              tuple[Literal_, ...]]:
    """The key path an expression reads, and what it gives where the key is absent (the
    last read's `.get` default; empty for a subscript)."""
    keys = _chain(node, function, 0)
    while isinstance(node, ast.Name) and function is not None:
        assigned = function.assignments.get(node.id, [])
        if len(assigned) != 1:
            break
        node = assigned[0].value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and node.args and keys:
        if len(node.args) == 1 and not node.keywords:
            return keys, (None,)
        default = _literals(node.args[1]) if len(node.args) == 2 else None
        if default is not None and len(default) == 1:
            return keys, default
    return keys, ()


def _chain(node: ast.expr, function: Function | None, depth: int) -> tuple[str, ...]:
    """The config key path an expression reads: `cfg["a"].get("b")["c"]` is (a, b, c), a
    local assigned once from such a path extends it; () when it reads none."""
    if depth > MAX_DEPTH:
        return ()
    keys: list[str] = []
    current = node
    while True:
        if isinstance(current, ast.Subscript) and isinstance(current.slice, ast.Constant) \
                and isinstance(current.slice.value, str):
            keys.append(current.slice.value)
            current = current.value
        elif (isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute)
              and current.func.attr == "get" and current.args
              and isinstance(current.args[0], ast.Constant)
              and isinstance(current.args[0].value, str)):
            keys.append(current.args[0].value)
            current = current.func.value
        else:
            break
    keys.reverse()
    if isinstance(current, ast.Name) and function is not None:
        assigned = function.assignments.get(current.id, [])
        if len(assigned) == 1:
            return _chain(assigned[0].value, function, depth + 1) + tuple(keys)
    return tuple(keys)


def _values_at(config: Mapping[str, Any], keys: tuple[str, ...]) -> Iterator[Any]:
    for _, value in _paths_at(config, keys, ()):
        yield value


def _paths_at(node: Any, keys: tuple[str, ...], path: tuple[str, ...],
              depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every value whose path ends with `keys`."""
    if not isinstance(node, Mapping) or depth > MAX_CONFIG_DEPTH:
        return
    for key, value in node.items():
        here = (*path, str(key))
        if len(here) >= len(keys) and here[-len(keys):] == keys:
            yield ".".join(here), value
        yield from _paths_at(value, keys, here, depth + 1)


def whole_tests(guard: Guard, function: Function | None,
                file: str) -> tuple[ConfigTest, ...] | None:
    """The config tests a guard is wholly made of, None when some part of it is not one
    (a call of the tree's own code, a value that is not the config, an `or` that holds:
    which side held is not told): what a claim that a call runs must not rest on."""
    if not _complete(guard.test, guard.holds, function, 0):
        return None
    found = tuple(dict.fromkeys(_tests(guard.test, guard.holds, function, file, 0)))
    return found or None


def _complete(test: ast.expr, holds: bool, function: Function | None, depth: int) -> bool:
    """Whether `_tests` turns the whole of `test` into config tests (same shapes)."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _complete(test.operand, not holds, function, depth + 1)
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And) == holds and all(
            _complete(value, holds, function, depth + 1) for value in test.values)
    file = ""
    return any(True for _ in _tests(test, holds, function, file, depth))


def decided(test: ConfigTest, config: Mapping[str, Any]) -> bool | None:
    """Whether `config` makes `test` come out as it must at the call, where that is told
    for certain: every value at the key path agrees (True) or every one disagrees
    (False). None where the config has no such path (and the read no default), where its
    values disagree among themselves, or where the path is one key matched below the top
    (a local dict's `batch["x"]` and a config's `x` cannot be told apart)."""
    found = [value for path, value in _paths_at(config, test.keys, ())
             if len(test.keys) > 1 or "." not in path]
    if not found:
        if not test.absent or len(test.keys) < 2:
            return None
        found = [test.absent[0]]
    outcomes = {test._outcome(value) == test.holds for value in found}
    return outcomes.pop() if len(outcomes) == 1 else None
