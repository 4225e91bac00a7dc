"""The tree's small helpers, run on config values while a setup is walked.

A setup computes what it sizes its clusters by through helpers of its own tree:
`env_name_list = extract_necessary_env_names(data_config)` (which environments the data
names: a loop over `train`/`validation`/`default`, an `isinstance`, a `set`), and whether
on-policy distillation keeps teacher nodes (`opd_module.is_non_colocated_teachers_enabled`).
The expressions' evaluator stops at any call; `HelperEvaluator`, which the tree rules' and
the world size's walks evaluate with, runs a module-level function of the tree (found
through the walked module's imports, a package's re-export followed) statement by
statement on the arguments' values: assignments (a tuple unpacked), `if` on a decided
test, `for` over a known sequence (bounded; `enumerate`, `zip`, `range`, `.items()`),
`.add`/`.append`/`.extend`/`.update` on a local, dict displays (`{**defaults, **over}`),
the pydantic models and dataclasses of the tree it builds from config values
(`TeacherResourceConfig(**merged)`: `models.construct`) and their fields, `return`.
Anything else, and any call deeper than `MAX_CALL_DEPTH`, leaves the result unknown with
the reason. Nothing is imported. A config block is what the tree's code holds at run time
(`models`): the instance of the pydantic model the tree declares it with (no dict;
`getattr` and `model_dump` read its fields and defaults), else the dict, list or scalar the
YAML load gave, never an instance of the tree's classes; such an `isinstance` is decided.
What a helper returns carries the config values its decided tests read.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from nemo_rl_workers.interpret.expressions import (
    Environ,
    Evaluator,
    Known,
    Read,
    Scope,
    Unknown,
    Value,
    truth,
)
from nemo_rl_workers.interpret.models import (
    Instance,
    construct,
    dump,
    extra_mode,
    fields,
    instance_dump,
    is_subclass,
    kind_of,
)
from nemo_rl_workers.tree.source.model import ClassInfo
from nemo_rl_workers.tree.source.parse import node_text
from nemo_rl_workers.tree.source.resolve import dotted_name, resolve_fqn, resolve_function

if TYPE_CHECKING:
    from nemo_rl_workers.tree.source import Function, SourceTree

MAX_CALL_DEPTH = 3  # helpers called from helpers
MAX_ITERATIONS = 1000  # loop turns run in all the helper calls of one walk (hostile source)
MAX_LIST = 100_000  # `[n] * k` longer than this is not built (a bundle list is short)

_TYPES: dict[str, type | tuple[type, ...]] = {
    "dict": Mapping, "list": list, "tuple": tuple, "str": str, "int": int, "float": float,
    "bool": bool, "set": set,
}
_MUTATORS = frozenset({"add", "append", "extend", "update"})
_VIEWS = frozenset({"items", "keys", "values"})
_ITERATORS: dict[str, Callable[..., Iterable[object]]] = {
    "enumerate": enumerate, "zip": zip, "range": range}
# The builtins whose calls are run here (the expressions' evaluator has the ones
# that only convert: `bool`, `int`, `len`, ...).
_RUN_BUILTINS = frozenset({"isinstance", "getattr", "set", "list", "tuple", "sorted", "sum",
                           "dict", "enumerate", "zip", "range"})
# What a loaded config holds: an `isinstance` test on one of these is decided here.
_PLAIN = (dict, list, str, int, float, bool, type(None))
_ABCS: dict[str, type] = {f"{m}.{n}": t for m in ("typing", "collections.abc")
                          for n, t in (("Mapping", Mapping), ("Sequence", Sequence))}
# Packages whose classes no loaded config value is an instance of: the tree's own, and
# the config-model base classes (a YAML load gives dicts, lists and scalars).
_NO_CONFIG_VALUE = frozenset({"nemo_rl", "pydantic"})


@dataclass
class Budget:
    """The loop turns left to the helper calls of one walk, shared by nested calls."""

    turns: int = MAX_ITERATIONS


class HelperEvaluator(Evaluator):
    """The tree rules' evaluator, which also runs the tree's small helpers on config
    values, and builds the lists a bundle count is written with (`[n] * nodes`)."""

    def __init__(self, scope: Scope, tree: SourceTree, depth: int, module: str,
                 budget: Budget) -> None:
        super().__init__(scope)
        self.tree = tree
        self.depth = depth
        self.module = module
        self.budget = budget

    def _binary(self, node: ast.BinOp, depth: int) -> Value:
        if isinstance(node.op, ast.Mult):
            left, right = self.value(node.left, depth), self.value(node.right, depth)
            if isinstance(left, Known) and isinstance(right, Known):
                items, times = (left.value, right.value) if isinstance(left.value, list) \
                    else (right.value, left.value)
                if isinstance(items, list) and isinstance(times, int) and not isinstance(
                        times, bool) and 0 <= len(items) * times <= MAX_LIST:
                    return Known(items * times, None, (*left.reads, *right.reads),
                                 (*left.env, *right.env))
        return super()._binary(node, depth)

    def _call(self, node: ast.Call, depth: int) -> Value:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "model_dump" and not node.args:
            return self._dump(func.value, node, depth)
        made = self._class(func)
        if made is not None:
            return self._construct(made, node, depth)
        if isinstance(func, ast.Attribute) and func.attr == "model_validate" and len(
                node.args) == 1 and not node.keywords:
            validated = self._class(func.value)
            if validated is not None:  # `Model.model_validate(block)`: `Model(**block)`
                return self._construct(validated, ast.Call(func=func.value, args=[], keywords=[
                    ast.keyword(arg=None, value=node.args[0])]), depth)
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return super()._call(node, depth)
        if isinstance(func, ast.Attribute) and func.attr in _VIEWS and not node.args:
            base = self.value(func.value, depth)
            if isinstance(base, Known) and isinstance(base.value, Mapping) and not isinstance(
                    base.value, Environ):
                view = {"items": base.value.items, "keys": base.value.keys,
                        "values": base.value.values}[func.attr]
                return Known(list(view()), None, base.reads, base.env)
        if isinstance(func, ast.Name) and func.id not in self.scope.names:
            builtin = self._builtin(func.id, node, depth)
            if builtin is not None:
                return builtin
        if isinstance(func, ast.Attribute) and func.attr == "get" and 1 <= len(node.args) <= 2:
            base = self.value(func.value, depth)
            if isinstance(base, Known) and base.path is None and isinstance(
                    base.value, Mapping):  # a plain dict the code built (`return {}`)
                key = self.value(node.args[0], depth)
                default: Value = self.value(node.args[1], depth) if len(
                    node.args) == 2 else Known(None)
                if isinstance(key, Known) and isinstance(default, Known):
                    try:
                        found = base.value.get(key.value, default.value)
                    except TypeError:
                        return Unknown(f"{node_text(node)} has an unhashable key")
                    return Known(found, None, (*base.reads, *key.reads), base.env)
        helper = self.helper_function(func)
        if helper is not None and self.depth < MAX_CALL_DEPTH:
            args = [self.value(a, depth) for a in node.args]
            return _run(helper, args, self.scope, self.tree, self.depth + 1, self.budget)
        return super()._call(node, depth)

    def _builtin(self, name: str, node: ast.Call, depth: int) -> Value | None:
        # `isinstance(x, list)`: the type is a name, not a value.
        if name not in _RUN_BUILTINS:
            return None
        given = node.args[:1] if name == "isinstance" else node.args
        args = [self.value(a, depth) for a in given]
        unknown = next((a for a in args if isinstance(a, Unknown)), None)
        if unknown is not None:  # what the argument's value is not known for says why
            return Unknown(unknown.reason, *_parts(args))
        known = [a for a in args if isinstance(a, Known)]
        reads = tuple(r for a in known for r in a.reads)
        if name == "isinstance" and len(node.args) == 2 and isinstance(node.args[1], ast.Name):
            return self._isinstance(known[0], node.args[1].id, reads)
        if name == "getattr" and 2 <= len(known) <= 3:
            return self._getattr(known[0], known[1], known[2] if len(known) == 3 else None)
        if name in ("set", "list", "tuple", "sorted", "sum", "dict") and len(known) <= 1:
            maker: Any = {"set": set, "list": list, "tuple": tuple, "sorted": sorted,
                          "sum": sum, "dict": dict}[name]
            try:
                return Known(maker(*[a.value for a in known]), None, reads)
            except Exception:
                return None
        if name in _ITERATORS and known and all(
                not isinstance(a.value, Environ) for a in known):
            try:  # a bounded list: `range` of a config's number is no longer than MAX_LIST
                if name == "range" and not all(
                        isinstance(a.value, int) and abs(a.value) <= MAX_LIST for a in known):
                    return None
                made = _ITERATORS[name](*[a.value for a in known])
                return Known(list(itertools.islice(made, MAX_LIST + 1)), None, reads)
            except Exception:
                return None
        return None

    def _isinstance(self, value: Known, name: str, reads: tuple[Read, ...]) -> Value | None:
        """`isinstance(value, name)`: a config block the tree declares with a pydantic
        model is that model's instance at run time (no dict); one declared with a
        TypedDict, or none, is the dict the YAML load gives."""
        model = value.value.cls if isinstance(value.value, Instance) else value.model
        kind = kind_of(self.tree, model) if model is not None else None
        if model is not None and kind is None:
            return None  # a model whose bases do not say what its instances are
        if kind == "pydantic" or isinstance(value.value, Instance):
            dotted = self.scope.imports.get(name)
            fqn = dotted if dotted is not None else (
                f"{self.module}.{name}" if name not in _TYPES else None)
            if fqn is None or fqn in _ABCS:
                return Known(False, None, reads)  # a model is no dict, list, Mapping...
            holds = is_subclass(self.tree, model, fqn)
            return None if holds is None else Known(holds, None, reads)
        kind_type = self._type(name)
        if kind_type is None or not isinstance(value.value, _PLAIN):
            return None
        return Known(isinstance(value.value, kind_type), None, reads)

    def _getattr(self, base: Known, name: Known, default: Known | None) -> Value | None:
        """`getattr(block, "field"[, default])` on a block the tree declares with a pydantic
        model: the field (the model's default where the YAML has none), else `default`."""
        if not (isinstance(name.value, str) and isinstance(base.value, Mapping) and
                base.path is not None and kind_of(self.tree, base.model) == "pydantic"):
            return None
        declared = fields(self.tree, base.model)
        if declared is None:
            return Unknown(f"getattr on {base.path or 'the config'}: its model may change "
                           "the values it is given", base.reads, base.env)
        kept = name.value in base.value and extra_mode(self.tree, base.model) == "allow"
        if name.value in declared or kept:
            return self._key(base, name.value, subscript=True, attribute=True)
        if default is None:
            return Unknown(f"{base.path}.{name.value} is no field of its model (an "
                           "AttributeError)", base.reads, base.env)
        path = f"{base.path}.{name.value}" if base.path else name.value
        return Known(default.value, None, (*base.reads, *default.reads, (path, "absent")),
                     base.env)

    def _dump(self, owner: ast.expr, node: ast.Call, depth: int) -> Value:
        """`block.model_dump(exclude_none=...)`: the dict pydantic gives back, fields
        filled with the model's defaults, where the model's statements decide it."""
        base = self.value(owner, depth)
        if isinstance(base, Unknown):
            return base
        options: dict[str, object] = {}
        for keyword in node.keywords:
            option = self.value(keyword.value, depth) if keyword.arg else None
            if keyword.arg != "exclude_none" or not isinstance(option, Known):
                return Unknown(f"it calls {node_text(node.func)}() with options this check "
                               "does not follow", base.reads, base.env)
            options[keyword.arg] = option.value
        if isinstance(base.value, Instance) and kind_of(self.tree, base.value.cls) == "pydantic":
            return Known(instance_dump(base.value, bool(options.get("exclude_none"))), None,
                         base.reads, base.env)
        if not isinstance(base.value, Mapping) or kind_of(self.tree, base.model) != "pydantic":
            return Unknown(f"it calls {node_text(node.func)}() on a value whose model this "
                           "check does not know", base.reads, base.env)
        dumped = dump(self.tree, base.model, base.value, bool(options.get("exclude_none")))
        if isinstance(dumped, str):
            return Unknown(f"it calls {node_text(node.func)}(): {dumped}", base.reads,
                           base.env)
        return Known(dumped, base.path, base.reads, base.env)

    def _attribute(self, node: ast.Attribute, depth: int) -> Value:
        """A field of an instance a helper built (`res.num_nodes`, `res.model_extra`)."""
        if not (isinstance(node.value, ast.Name) and node.value.id in self.scope.names):
            return super()._attribute(node, depth)
        base = self.value(node.value, depth)
        if isinstance(base, Known) and isinstance(base.value, Instance):
            instance = base.value
            if node.attr == "model_extra" and kind_of(self.tree, instance.cls) == "pydantic":
                return Known(dict(instance.extra) if instance.extra is not None else None,
                             None, base.reads, base.env)
            if node.attr in instance.values:
                return Known(instance.values[node.attr], None, base.reads, base.env)
            return Unknown(f"{instance.cls.name} has no field {node.attr} this check knows",
                           base.reads, base.env)
        return super()._attribute(node, depth)

    def _class(self, func: ast.expr) -> ClassInfo | None:
        """The tree's class a call names (a model or dataclass a helper builds)."""
        dotted = dotted_name(func)
        module = self.tree.module(self.module)
        if dotted is None or module is None or dotted.partition(".")[0] in self.scope.names:
            return None
        head, _, rest = dotted.partition(".")
        target = self.scope.imports.get(head)
        absolute = (f"{target}.{rest}" if rest else target) if target is not None else (
            f"{self.module}.{dotted}" if head in module.classes else None)
        return resolve_fqn(self.tree, absolute) if absolute is not None else None

    def _construct(self, cls: ClassInfo, node: ast.Call, depth: int) -> Value:
        values: list[Value] = [self.value(a, depth) for a in node.args
                               if not isinstance(a, ast.Starred)]
        if len(values) != len(node.args):
            return Unknown(f"it builds {cls.name}(...) with unpacked arguments", *_parts(values))
        kwargs: dict[str, object] = {}
        for keyword in node.keywords:
            value = self.value(keyword.value, depth)
            values.append(value)
            if isinstance(value, Unknown):
                return Unknown(value.reason, *_parts(values))
            if keyword.arg is not None:
                kwargs[keyword.arg] = value.value
            elif isinstance(value.value, Mapping) and all(
                    isinstance(k, str) for k in value.value):
                kwargs.update(value.value)
            else:
                return Unknown(f"it builds {cls.name}(**...) of a value that is no mapping",
                               *_parts(values))
        args = [v.value for v in values[:len(node.args)] if isinstance(v, Known)]
        if any(isinstance(v, Unknown) for v in values[:len(node.args)]):
            return Unknown(next(v.reason for v in values if isinstance(v, Unknown)),
                           *_parts(values))
        made = construct(self.tree, cls, args, kwargs)
        reads, env = _parts(values)
        if isinstance(made, str):
            return Unknown(f"it builds {cls.name}(...): {made}", reads, env)
        return Known(made, None, reads, env)

    def _type(self, name: str) -> type | tuple[type, ...] | None:
        """The type an `isinstance` names, for a value a config holds: a builtin, an ABC,
        or a class of the tree or a config model's base (which no loaded value is)."""
        dotted = self.scope.imports.get(name)
        if dotted is None:
            return _TYPES.get(name)
        if dotted in _ABCS:
            return _ABCS[dotted]
        if dotted.partition(".")[0] in _NO_CONFIG_VALUE:
            return ()  # isinstance(x, ()) is False
        return None

    def helper_function(self, func: ast.expr) -> Function | None:
        """The tree's module-level function a call names: one of this module's, or one
        imported (`from x import f`, `import x as m` then `m.f`), re-exports followed
        (`tree.source.resolve_function`)."""
        dotted: str | None = None
        if isinstance(func, ast.Name):
            dotted = self.scope.imports.get(func.id, f"{self.module}.{func.id}")
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id not in self.scope.names:
            base = self.scope.imports.get(func.value.id)
            dotted = f"{base}.{func.attr}" if base else None
        return resolve_function(self.tree, dotted) if dotted is not None else None


def _parts(values: list[Value]) -> tuple[tuple[Read, ...], tuple[str, ...]]:
    return (tuple(dict.fromkeys(r for v in values for r in v.reads)),
            tuple(dict.fromkeys(e for v in values for e in v.env)))


class HelperStopped(Exception):
    """A helper's statement this check does not run: the call's value is unknown. Caught
    where the helper is called, never raised past it."""


# How a statement leaves the block it is in: on to the next (None), or by `return` (with
# the value), `break` or `continue`.
_Flow: TypeAlias = "tuple[str, Value] | None"
_BREAK: tuple[str, Value] = ("break", Known(None))
_CONTINUE: tuple[str, Value] = ("continue", Known(None))


def _run(function: Function, args: list[Value], caller: Scope, tree: SourceTree,
         depth: int, budget: Budget) -> Value:
    """A helper's result on these arguments, its body run statement by statement."""
    name = function.qualname
    params = [p for p in function.params if p.kind in ("positional-only", "positional")]
    if "." in name or len(args) > len(params) or any(
            not p.has_default for p in params[len(args):]) or len(params) != len(
            function.params):
        return Unknown(f"it calls {name}(), code this check does not run")
    if len(args) < len(params):
        return Unknown(f"it calls {name}() with defaults this check does not read")
    module = tree.module(function.module)
    # The caller's environment, and its config models' fields (where defaults and the
    # models of nested blocks come from).
    scope = Scope(names={p.name: a for p, a in zip(params, args, strict=True)},
                  environ=caller.environ, constants=module.assignments if module else {},
                  imports=module.imports if module else {}, fields=caller.fields)
    runner = _Runner(HelperEvaluator(scope, tree, depth, function.module, budget))
    try:
        flow = runner.body(function.node.body)
    except HelperStopped as stopped:
        return Unknown(f"it calls {name}(), which {stopped}")
    if flow is not None and flow[0] != "return":
        return Unknown(f"it calls {name}(), which has a {flow[0]} outside a loop")
    result = flow[1] if flow is not None else Known(None)
    # What it returns was decided also by the tests that chose its path.
    reads = tuple(dict.fromkeys((*result.reads, *runner.decided)))
    if isinstance(result, Known):
        return Known(result.value, result.path, reads, result.env, result.model)
    return Unknown(result.reason, reads, result.env)


class _Runner:
    """Runs a helper's statements: assignments, `if`, `for` over a known sequence,
    `.add`/`.append` on a local, `return`; anything else stops it."""

    def __init__(self, evaluator: HelperEvaluator) -> None:
        self.evaluator = evaluator
        self.names = evaluator.scope.names
        self.decided: list[Read] = []  # the config values its decided `if`s read

    def body(self, statements: list[ast.stmt]) -> _Flow:
        for stmt in statements:
            flow = self.statement(stmt)
            if flow is not None:
                return flow
        return None

    def statement(self, stmt: ast.stmt) -> _Flow:
        value = self.evaluator.value
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return None  # a docstring
        if isinstance(stmt, ast.Pass):
            return None
        if isinstance(stmt, ast.Return):
            return ("return", value(stmt.value) if stmt.value is not None else Known(None))
        if isinstance(stmt, ast.Break):
            return _BREAK
        if isinstance(stmt, ast.Continue):
            return _CONTINUE
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            self._bind(stmt.targets[0], value(stmt.value))
            return None
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and \
                stmt.value is not None:
            self.names[stmt.target.id] = value(stmt.value)
            return None
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            self.names[stmt.target.id] = value(ast.BinOp(
                left=ast.Name(stmt.target.id, ast.Load()), op=stmt.op, right=stmt.value))
            return None
        if isinstance(stmt, ast.If):
            test = value(stmt.test)
            holds = truth(test)
            self.decided.extend(test.reads)
            if holds is None:
                raise HelperStopped(f"branches on {node_text(stmt.test)}, a test this check "
                                    "does not decide")
            return self.body(stmt.body if holds else stmt.orelse)
        if isinstance(stmt, ast.Assert):
            test = value(stmt.test)
            self.decided.extend(test.reads)
            if truth(test) is True:
                return None
            raise HelperStopped(f"asserts {node_text(stmt.test)}, which " + (
                "fails on the config's values" if truth(test) is False
                else "this check does not decide"))
        if isinstance(stmt, ast.For) and not stmt.orelse:
            return self._loop(stmt)
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._mutate(stmt.value)
            return None
        raise HelperStopped(f"runs a {type(stmt).__name__} statement (line {stmt.lineno}) "
                            "this check does not run")

    def _bind(self, target: ast.expr, value: Value) -> None:
        """`name = ...`, or `a, b = ...` of a known sequence of as many items."""
        if isinstance(target, ast.Name):
            self.names[target.id] = value
            return
        if not (isinstance(target, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Name) for e in target.elts)):
            raise HelperStopped(f"assigns to {node_text(target)}, which this check does not "
                                "follow")
        items = value.value if isinstance(value, Known) else None
        if not isinstance(items, (list, tuple)) or len(items) != len(target.elts):
            raise HelperStopped(f"unpacks {node_text(target)} from a value this check does "
                                "not know to fit")
        for element, item in zip(target.elts, items, strict=True):
            assert isinstance(element, ast.Name)
            self.names[element.id] = Known(item, None, value.reads, value.env)

    def _loop(self, stmt: ast.For) -> _Flow:
        sequence = self.evaluator.value(stmt.iter)
        if isinstance(sequence, Unknown) or not isinstance(
                sequence.value, list | tuple | set | dict | Mapping | str):
            raise HelperStopped(f"loops over {node_text(stmt.iter)}, a value this check "
                                "does not know")
        for item in list(sequence.value):
            self.evaluator.budget.turns -= 1
            if self.evaluator.budget.turns < 0:
                raise HelperStopped(f"loops more than the {MAX_ITERATIONS} turns this check "
                                    "follows")
            self._bind(stmt.target, Known(item, None, sequence.reads, sequence.env))
            flow = self.body(stmt.body)
            if flow is _BREAK:
                break
            if flow is not None and flow is not _CONTINUE:
                return flow  # a return inside the loop
        return None

    def _mutate(self, call: ast.Call) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.attr in _MUTATORS and len(call.args) == 1 and not call.keywords):
            raise HelperStopped(f"calls {node_text(func)}(), code this check does not run")
        name = func.value.id
        current, argument = self.names.get(name), self.evaluator.value(call.args[0])
        if not isinstance(current, Known) or not isinstance(argument, Known):
            self.names[name] = current if isinstance(current, Unknown) else (
                argument if isinstance(argument, Unknown) else Unknown(f"{name} is unknown"))
            return
        changed: Any = copy.copy(current.value)
        try:
            getattr(changed, func.attr)(argument.value)
        except Exception as error:
            raise HelperStopped(
                f"calls {node_text(func)}() on a value it rejects") from error
        self.names[name] = Known(changed, None, (*current.reads, *argument.reads),
                                 (*current.env, *argument.env))
