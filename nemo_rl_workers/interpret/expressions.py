"""Expressions of a tree's code evaluated on one loaded config, importing nothing.

`conditions` keeps the few test shapes a call is guarded by (a key path compared with
literals); a tree's own pre-allocation rules (`checks.config.tree_rules`) need more of what
upstream writes before it starts workers: locals assigned from config values
(`tp_size = config["megatron_cfg"]["tensor_model_parallel_size"]`), arithmetic on them
(`pp_size * cp_size * tp_size`), comparisons of every kind, `and`/`or`/`not`,
`.get(key, default)`, attribute reads of a config block (`master_config.loss_fn`),
the builtins that only convert (`bool`, `int`, `len`, ...), module constants, and the
environment switches the tree reads (`os.environ.get("NRL_IGNORE_TP_ACCURACY_CHECK")`,
`"X" in os.environ`). Anything else (a call of the tree's own code, a value that is not
the config, the size of a cluster built at run time) is `Unknown`, with the reason in
words: a rule that depends on it is undecided, never passed or failed.

Every value keeps the config keys (dotted path, value as shown) and the environment
variables read to get it, so a verdict can say what it was decided on.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from nemo_rl_workers.interpret.conditions import short_value
from nemo_rl_workers.interpret.strict import unknown_shape
from nemo_rl_workers.tree.source.parse import node_text
from nemo_rl_workers.tree.source.resolve import dotted_name

MAX_DEPTH = 40  # nested expressions followed; deeper is Unknown (hostile source)
MAX_NUMBER = 10**30  # arithmetic beyond this is not a config's (and could be costly)
Read: TypeAlias = tuple[str, str]  # (config key path, the value as shown, or "absent")


@dataclass(frozen=True)
class ClusterSize:
    """A cluster the tree builds, of the world size its entry's `setup` computes from the
    config (`tree_world_size`): what `cluster.world_size()` answers in a driver built on it."""

    size: int


@dataclass(frozen=True)
class Known:
    """A value the config (or a literal, or the environment) gives."""

    value: object
    path: str | None = None  # the config path of a config block or value read as such
    reads: tuple[Read, ...] = ()
    env: tuple[str, ...] = ()
    # The class the tree declares this config block with (a pydantic model or TypedDict
    # of its source, opaque here): where its field defaults come from.
    model: object = None


@dataclass(frozen=True)
class Unknown:
    """A value this evaluation cannot give, and why."""

    reason: str
    reads: tuple[Read, ...] = ()
    env: tuple[str, ...] = ()


Value: TypeAlias = Known | Unknown


class Environ:
    """`os.environ` as the evaluation sees it: the process's environment with what the
    tree's code set before (`os.environ["X"] = "1"` in `setup`)."""

    def __init__(self, base: Mapping[str, str]) -> None:
        self.base = base
        self.overlay: dict[str, str | None] = {}
        # Variables the tree's code sets under a test this config does not decide.
        self.unsure: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        if name in self.overlay:
            return self.overlay[name]
        return self.base.get(name)

    def read(self, name: str, reads: tuple[Read, ...], env: tuple[str, ...],
             default: Value | None) -> Value:
        """`os.environ.get(name[, default])` (`default` None: a subscript, where an unset
        variable is a KeyError)."""
        env = (*env, name)
        if name in self.unsure:
            return Unknown(self.unsure[name], reads, env)
        got = self.get(name)
        if got is not None:
            return Known(got, None, reads, env)
        if default is None:
            return Unknown(f"{name} is not set in the environment", reads, env)
        return _with(default, Known(None, None, reads, env))


@dataclass
class Scope:
    """What names mean while a function body is walked."""

    names: dict[str, Value]
    environ: Environ
    # Module-level names of the function's module: constants (`TOP_K_THRESHOLD = 8000`)
    # and imports (`os`).
    constants: Mapping[str, ast.expr] = field(default_factory=dict)
    imports: Mapping[str, str] = field(default_factory=dict)
    # (model, key) -> (the field's literal default, if it has one; the field's own model).
    fields: Callable[[object, str], tuple[Known | None, object]] | None = None


def _merge(*values: Value) -> tuple[tuple[Read, ...], tuple[str, ...]]:
    reads: list[Read] = []
    env: list[str] = []
    for value in values:
        reads.extend(value.reads)
        env.extend(value.env)
    return tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(env))


def _known(value: object, *parts: Value, path: str | None = None) -> Known:
    reads, env = _merge(*parts)
    return Known(value, path, reads, env)


def _unknown(reason: str, *parts: Value) -> Unknown:
    reads, env = _merge(*parts)
    return Unknown(reason, reads, env)


def show_value(value: object) -> str:
    """A config value, short; never raises (an int of thousands of digits has no str())."""
    try:
        return short_value(value)
    except ValueError:
        return "a number too long to show"


def truth(value: Value) -> bool | None:
    """The value's truthiness; None when unknown (or when asking raises)."""
    if isinstance(value, Unknown):
        return None
    if isinstance(value.value, Environ):
        return True
    try:
        return bool(value.value)
    except Exception:  # a value whose truthiness raises decides nothing
        return None


_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
# Builtins that only convert or measure a value; anything else the tree calls is its
# own code (or a library's) and is not run.
_BUILTINS: dict[str, Callable[..., Any]] = {
    "bool": bool, "int": int, "float": float, "str": str, "len": len, "abs": abs,
    "min": min, "max": max,
}


def _small(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return math.isnan(value) or abs(value) <= MAX_NUMBER if isinstance(value, float) else \
        abs(value) <= MAX_NUMBER


# Expressions deliberately not computed (their value is undecided, said so); any other
# node type is an unknown shape (`strict`).
_NOT_COMPUTED = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda,
                 ast.JoinedStr, ast.FormattedValue, ast.Await, ast.Yield, ast.YieldFrom,
                 ast.NamedExpr, ast.Starred, ast.Slice)


class Evaluator:
    """Evaluates expressions of one function body in a `Scope`."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def value(self, node: ast.expr, depth: int = 0) -> Value:
        if depth > MAX_DEPTH:
            return Unknown("the expression is nested too deeply to follow")
        try:
            return self._value(node, depth + 1)
        except RecursionError:
            return Unknown("the expression is nested too deeply to follow")

    def _value(self, node: ast.expr, depth: int) -> Value:
        if isinstance(node, ast.Constant):
            return Known(node.value)
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = [self.value(e, depth) for e in node.elts]
            if all(isinstance(i, Known) for i in items):
                values = [i.value for i in items if isinstance(i, Known)]
                built: object = tuple(values) if isinstance(node, ast.Tuple) else (
                    list(values) if isinstance(node, ast.List) else _set(values))
                return _known(built, *items)
            return _unknown(next(i.reason for i in items if isinstance(i, Unknown)), *items)
        if isinstance(node, ast.Dict):
            return self._dict(node, depth)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, depth)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node, depth)
        if isinstance(node, ast.BinOp):
            return self._binary(node, depth)
        if isinstance(node, ast.Compare):
            return self._compare(node, depth)
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, depth)
            holds = truth(test)
            if holds is None:
                return _unknown(_reason(test), test)
            chosen = self.value(node.body if holds else node.orelse, depth)
            return _with(chosen, test)
        if isinstance(node, _NOT_COMPUTED):
            return Unknown(f"{short_text(node)} is not a value this check computes")
        return Unknown(unknown_shape(node, "an expression"))

    def _dict(self, node: ast.Dict, depth: int) -> Value:
        """`{k: v, **other}`: keys and values known, each unpacked part a mapping."""
        built: dict[object, object] = {}
        parts: list[Value] = []
        for key, item in zip(node.keys, node.values, strict=True):
            value = self.value(item, depth)
            parts.append(value)
            if isinstance(value, Unknown):
                return _unknown(value.reason, *parts)
            if key is None:
                if not isinstance(value.value, Mapping) or isinstance(value.value, Environ):
                    return _unknown(f"{short_text(node)} unpacks a value that is no mapping",
                                    *parts)
                built.update(value.value)
                continue
            name = self.value(key, depth)
            parts.append(name)
            if isinstance(name, Unknown):
                return _unknown(name.reason, *parts)
            try:
                built[name.value] = value.value
            except TypeError:
                return _unknown(f"{short_text(node)} has an unhashable key", *parts)
        return _known(built, *parts)

    def _name(self, name: str) -> Value:
        if name in self.scope.names:
            return self.scope.names[name]
        constant = self.scope.constants.get(name)
        if constant is not None:
            try:
                return Known(ast.literal_eval(constant))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                pass
        return Unknown(f"it reads {name}, which is not a config value")

    def _attribute(self, node: ast.Attribute, depth: int) -> Value:
        if isinstance(node.value, ast.Name) and self.scope.imports.get(node.value.id) == "os" \
                and node.attr == "environ" and node.value.id not in self.scope.names:
            return Known(self.scope.environ)
        dotted = dotted_name(node)
        if dotted is not None and dotted in self.scope.names:  # `self.cfg`
            return self.scope.names[dotted]
        base = self.value(node.value, depth)
        if isinstance(base, Known) and base.path is not None and isinstance(
                base.value, Mapping):  # `master_config.loss_fn`: a config block's key
            return self._key(base, node.attr, subscript=True, attribute=True)
        if isinstance(base, Unknown):
            return base
        return _unknown(f"it reads {short_text(node)}, which is not a config value", base)

    def _key(self, base: Known, key: object, *, subscript: bool,
             default: Value | None = None, attribute: bool = False) -> Value:
        assert isinstance(base.value, Mapping)
        path = f"{base.path}.{key}" if base.path else str(key)
        declared: tuple[Known | None, object] = (None, None)
        if base.model is not None and self.scope.fields is not None and isinstance(key, str):
            declared = self.scope.fields(base.model, key)
        if key in base.value:
            found = base.value[key]
            if isinstance(found, Unknown):  # set by code the walk could not compute
                return Unknown(found.reason, (*base.reads, *found.reads),
                               (*base.env, *found.env))
            read: Read = (path, "{...}" if isinstance(found, Mapping) else show_value(found))
            return Known(found, path, (*base.reads, read), base.env, declared[1])
        if subscript or default is None:
            if attribute and declared[0] is not None:  # the model fills in its default
                shown_default = show_value(declared[0].value)
                return Known(declared[0].value, None,
                             (*base.reads, (path, f"absent, so its model's {shown_default}")),
                             base.env)
            if attribute:  # a config model's field: its default is the model's
                return _unknown(f"the config has no {path}, and the tree reads it as a "
                                "field of its config model, where this check finds no "
                                "literal default for it", base)
            if subscript:
                return _unknown(f"the config has no {path}, which the tree reads as "
                                "required (a KeyError)", base)
            return Known(None, None, (*base.reads, (path, "absent")), base.env)
        shown = default if isinstance(default, Unknown) else Known(
            default.value, path if isinstance(default.value, Mapping) else None,
            default.reads, default.env)
        return _with(shown, Known(None, None, (*base.reads, (path, "absent")), base.env))

    def _subscript(self, node: ast.Subscript, depth: int) -> Value:
        base = self.value(node.value, depth)
        index = self.value(node.slice, depth)
        if isinstance(base, Unknown):
            return _with(base, index)
        if isinstance(index, Unknown):
            return _unknown(index.reason, base, index)
        if isinstance(base.value, Environ) and isinstance(index.value, str):
            return base.value.read(index.value, base.reads, base.env, None)
        if isinstance(base.value, Mapping) and base.path is not None:
            return self._key(base, index.value, subscript=True)
        try:
            found = base.value[index.value]  # type: ignore[index]  # any indexable
            if isinstance(found, Unknown):
                return _unknown(found.reason, base, index, found)
            return _known(found, base, index)
        except Exception:
            return _unknown(f"{short_text(node)} cannot be read from the config's values", base)

    def _call(self, node: ast.Call, depth: int) -> Value:
        func = node.func
        args = [self.value(a, depth) for a in node.args]
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return _unknown(f"it calls {short_text(func)}(...) with keywords or unpacking", *args)
        if isinstance(func, ast.Attribute) and func.attr == "get" and 1 <= len(args) <= 2:
            base = self.value(func.value, depth)
            if isinstance(base, Unknown):
                return _with(base, *args)
            key = args[0]
            if isinstance(key, Unknown):
                return _unknown(key.reason, base, key)
            default = args[1] if len(args) == 2 else Known(None)
            if isinstance(base.value, Environ) and isinstance(key.value, str):
                return base.value.read(key.value, base.reads, base.env, default)
            if isinstance(base.value, Mapping) and base.path is not None:
                return self._key(base, key.value, subscript=False, default=default)
            return _unknown(f"it calls {short_text(func)}(), not on a config block", base)
        if isinstance(func, ast.Attribute) and func.attr == "getenv" and isinstance(
                func.value, ast.Name) and self.scope.imports.get(func.value.id) == "os" \
                and 1 <= len(args) <= 2 and isinstance(args[0], Known) and isinstance(
                    args[0].value, str):
            default = args[1] if len(args) == 2 else Known(None)
            return self.scope.environ.read(args[0].value, (), (), default)
        if isinstance(func, ast.Name) and func.id in _BUILTINS and func.id not in \
                self.scope.names and func.id not in self.scope.constants:
            if any(isinstance(a, Unknown) for a in args):
                return _unknown(next(a.reason for a in args if isinstance(a, Unknown)), *args)
            try:
                result = _BUILTINS[func.id](*[a.value for a in args if isinstance(a, Known)])
            except Exception:
                return _unknown(f"{short_text(node)} raises on the config's values", *args)
            return _known(result, *args)
        if isinstance(func, ast.Name) and self.scope.imports.get(func.id) == "typing.cast" \
                and len(args) == 2:  # `cast(T, x)` is `x`
            return args[1]
        if isinstance(func, ast.Attribute) and func.attr == "world_size":
            base = self.value(func.value, depth)
            if isinstance(base, Known) and isinstance(base.value, ClusterSize) and not args:
                return _known(base.value.size, base)
            return _unknown(f"{short_text(node)} is the size of a cluster the tree builds at run "
                            "time", *args)
        return _unknown(f"it calls {short_text(func)}(), code this check does not run", *args)

    def _boolop(self, node: ast.BoolOp, depth: int) -> Value:
        """Python's short circuit over three values: a known deciding operand decides
        even after an unknown one (`unknown and False` is false)."""
        is_and = isinstance(node.op, ast.And)
        seen: list[Value] = []
        unknown: Unknown | None = None
        last: Value = Known(is_and)
        for operand in node.values:
            value = self.value(operand, depth)
            seen.append(value)
            holds = truth(value)
            if holds is None:
                unknown = unknown or (value if isinstance(value, Unknown)
                                      else Unknown(_reason(value)))
                continue
            if holds != is_and:  # a false operand of `and`, a true one of `or`
                return _with(value, *seen) if unknown is None else _known(
                    not is_and, *seen)
            last = value
        if unknown is not None:
            return _unknown(unknown.reason, *seen)
        return _with(last, *seen)

    def _unary(self, node: ast.UnaryOp, depth: int) -> Value:
        operand = self.value(node.operand, depth)
        if isinstance(operand, Unknown):
            return operand
        if isinstance(node.op, ast.Not):
            holds = truth(operand)
            return _known(not holds, operand) if holds is not None else _unknown(
                _reason(operand), operand)
        try:
            if isinstance(node.op, ast.USub):
                return _known(-operand.value, operand)  # type: ignore[operator]  # numbers only
            if isinstance(node.op, ast.UAdd):
                return _known(+operand.value, operand)  # type: ignore[operator]  # numbers only
        except TypeError:
            pass
        return _unknown(f"{short_text(node)} is not computed from the config's values", operand)

    def _binary(self, node: ast.BinOp, depth: int) -> Value:
        left, right = self.value(node.left, depth), self.value(node.right, depth)
        if isinstance(left, Unknown) or isinstance(right, Unknown):
            reason = left.reason if isinstance(left, Unknown) else _reason(right)
            return _unknown(reason, left, right)
        function = _BINARY.get(type(node.op))
        if function is None or not (_small(left.value) and _small(right.value)) or (
                isinstance(node.op, ast.Mult) and not _scalar(left.value, right.value)):
            return _unknown(f"{short_text(node)} is not computed here", left, right)
        try:
            result = function(left.value, right.value)
        except Exception:
            return _unknown(f"{short_text(node)} raises on the config's values", left, right)
        return _known(result, left, right)

    def _compare(self, node: ast.Compare, depth: int) -> Value:
        left = self.value(node.left, depth)
        parts: list[Value] = [left]
        result = True
        undecided: Unknown | None = None
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.value(comparator, depth)
            parts.append(right)
            if isinstance(left, Unknown) or isinstance(right, Unknown):
                undecided = undecided or (left if isinstance(left, Unknown) else right
                                          if isinstance(right, Unknown) else None)
                left = right
                continue
            outcome = _compare_one(op, left, right)
            if outcome is None:
                undecided = undecided or Unknown(f"{short_text(node)} is not computed here")
            elif not outcome:
                result = False
            left = right
        if not result:
            return _known(False, *parts)
        if undecided is not None:
            return _unknown(undecided.reason, *parts)
        return _known(True, *parts)


def _compare_one(op: ast.cmpop, left: Known, right: Known) -> bool | None:
    if isinstance(op, (ast.In, ast.NotIn)):
        container = right.value
        if isinstance(container, Environ):
            if not isinstance(left.value, str) or left.value in container.unsure:
                return None
            found = container.get(left.value) is not None
        else:
            try:
                found = left.value in container  # type: ignore[operator]  # any container
            except Exception:
                return None
        return found == isinstance(op, ast.In)
    function = _COMPARE.get(type(op))
    if function is None:
        return None
    try:
        return bool(function(left.value, right.value))
    except Exception:
        return None


def environment_read(node: ast.expr, scope: Scope) -> tuple[str, ...]:
    """The environment variables an expression reads (for `"X" in os.environ`, whose
    value carries none: `in` reads the container, not a key)."""
    return tuple(name for name, container in _membership_tests(node)
                 if is_environ(container, scope))


@functools.lru_cache(maxsize=4096)
def _membership_tests(node: ast.expr) -> tuple[tuple[str, ast.expr], ...]:
    """`"X" in C` tests inside `node`, as (X, C): found once per node of the tree's code,
    whose module's imports then say whether C is `os.environ`."""
    return tuple((sub.left.value, sub.comparators[0]) for sub in ast.walk(node)
                 if isinstance(sub, ast.Compare) and len(sub.ops) == 1
                 and isinstance(sub.ops[0], (ast.In, ast.NotIn))
                 and isinstance(sub.left, ast.Constant) and isinstance(sub.left.value, str))


def is_environ(node: ast.expr, scope: Scope) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ"
            and isinstance(node.value, ast.Name)
            and scope.imports.get(node.value.id) == "os")


def _set(values: list[object]) -> object:
    try:
        return set(values)
    except TypeError:
        return tuple(values)


MAX_REPEAT = 200  # `"-" * 80` in a message; `[x] * n` of a config-chosen n is not built


def _scalar(left: object, right: object) -> bool:
    """`*` on two numbers, or a short string repeated a few times."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
        return True
    if isinstance(left, str) and isinstance(right, int) and not isinstance(right, bool):
        return len(left) * max(right, 0) <= MAX_REPEAT
    return False


def _with(value: Value, *more: Value) -> Value:
    """`value`, also carrying what `more` read."""
    reads, env = _merge(value, *more)
    if isinstance(value, Known):
        return Known(value.value, value.path, reads, env, value.model)
    return Unknown(value.reason, reads, env)


def _reason(value: Value) -> str:
    return value.reason if isinstance(value, Unknown) else "its truth cannot be told"


def short_text(node: ast.AST, width: int = 80) -> str:
    """A node of the tree's code as a verdict names it: one line, at most `width` characters."""
    text = " ".join(node_text(node).split())
    return text if len(text) <= width else text[:width - 3] + "..."
