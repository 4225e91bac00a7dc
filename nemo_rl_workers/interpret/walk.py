"""The statement walk: one function body of the tree run in statement order on a config.

`SetupWalk` walks a body (an algorithm's `setup`, a driver's constructor, an entry's
function) from the source model, never importing it: each test is evaluated on the
config (`expressions`, with the tree's small helpers run: `helpers`), an `if` the config
decides is followed one way, one it does not decide both ways (what they set differently
is then unknown), a loop over a sequence the config decides is run turn by turn, and the
walk stops where workers start (`starts_workers`: a call of a name in `stops`, or a store
of the driver's worker group). Each `assert` and each guarded `raise` it reaches is a
`TreeRule`, judged: refuses, passes, or undecided with the reason.

The walks that extend it override `statement`, `assign` and `starts_workers`.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nemo_rl_workers.errors import Problem
from nemo_rl_workers.interpret.expressions import (
    Environ,
    Evaluator,
    Known,
    Read,
    Scope,
    Unknown,
    Value,
    environment_read,
    is_environ,
    short_text,
    show_value,
    truth,
)
from nemo_rl_workers.interpret.helpers import Budget, HelperEvaluator
from nemo_rl_workers.interpret.shape import called_name, local_builders, shape_of, starts
from nemo_rl_workers.interpret.strict import unknown_shape
from nemo_rl_workers.reading.recorded_reads import ENVIRON
from nemo_rl_workers.tree.source.imports import import_bindings, is_package_file

if TYPE_CHECKING:
    from nemo_rl_workers.tree.revision import Revision
    from nemo_rl_workers.tree.source import Function, Module, SourceTree

Verdict = Literal["refuses", "passes", "undecided"]

# A tree's message is shown whole: its last lines are often the escape it names (lm_policy's
# TP>=4 assertion ends with NRL_IGNORE_TP_ACCURACY_CHECK). Only a message past this, which
# no real assertion writes, is cut, and says so.
MAX_MESSAGE = 4000
MAX_STATEMENTS = 5000  # statements walked per function (hostile source)
MAX_TURNS = 64  # turns of a setup's loop followed (teachers, datasets: a few)
MAX_HELPER_DEPTH = 2  # helpers of helpers whose own rules are walked
_SEVERITY: dict[str, int] = {"passes": 0, "undecided": 1, "refuses": 2}

@dataclass(frozen=True)
class TreeRule:
    """One `assert` or `raise` the tree runs before its workers start, judged."""

    where: str  # file:line, relative to the tree
    function: str  # "Policy.__init__", "grpo.setup"
    condition: str  # the test as written (a raise: the tests it runs under)
    message: str
    verdict: Verdict
    reason: str = ""  # undecided: why
    reads: tuple[Read, ...] = ()
    env: tuple[str, ...] = ()
    exception: str = "AssertionError"

    def problem(self, section: str) -> Problem:
        leaves = [r for r in self.reads if r[1] != "{...}"]
        path = leaves[0][0] if leaves else section
        given = ", ".join([f"{p}={v}" for p, v in leaves] +
                          [f"${name} is {'set' if ENVIRON.get(name) else 'unset'}"
                           for name in self.env])
        asserted = self.exception == "AssertionError"
        how = (f"assert {self.condition} fails" if asserted
               else f"it raises {self.exception} where {self.condition}")
        return Problem(
            path=path, expected=f"{self.condition} to {'hold' if asserted else 'fail'}",
            given=given or "the config's values",
            message=(f"{path}: this NeMo-RL refuses the config before any worker starts: "
                     f"{how} ({given or 'on the config'}) at {self.where} ({self.function}): "
                     f"\"{self.message}\""),
            rule="tree.refuses")

    def line(self) -> str:
        """A verdict other than a refusal, as one line."""
        what = f"{self.where} ({self.function}): {self.condition}"
        if self.verdict == "undecided":
            return f"tree rule {what}: undecided: {self.reason}"
        return f"tree rule {what}: holds"


def _bound(helper: Function, values: list[Value], named: dict[str, Value]
           ) -> dict[str, Value] | None:
    """The helper's parameters bound to a call's arguments (a default left unknown: the
    walk does not read defaults), or None where the call does not fit them."""
    params = list(helper.params)
    positional = [p for p in params if p.kind in ("positional-only", "positional")]
    if len(values) > len(positional) or any(p.kind in ("var-positional", "var-keyword")
                                            for p in params):
        return None
    bound: dict[str, Value] = {p.name: v for p, v in zip(positional, values, strict=False)}
    for name, value in named.items():
        if name in bound or not any(p.name == name and p.kind != "positional-only"
                                    for p in params):
            return None
        bound[name] = value
    defaults = _literal_defaults(helper)
    for param in params:
        if param.name not in bound:
            if not param.has_default:
                return None
            bound[param.name] = defaults.get(param.name) or Unknown(
                f"{param.name} is {helper.qualname}'s default, which is not a literal")
    return bound


def _literal_defaults(helper: Function) -> dict[str, Value]:
    """The parameters whose default is a literal (`is_eval: bool = False`), by name."""
    node = helper.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults,
                  strict=True),
             *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
               if d is not None)]
    found: dict[str, Value] = {}
    for arg, default in pairs:
        try:
            found[arg.arg] = Known(ast.literal_eval(default))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return found


def walk_scope(function: Function, module: Module | None, environ: Environ,
           names: dict[str, Value]) -> Scope:
    return Scope(names=names, environ=environ,
                 constants=module.assignments if module is not None else {},
                 imports=module.imports if module is not None else {})


def worker_stops(tree: SourceTree, revision: Revision, function: Function) -> frozenset[str]:
    """Names whose call (or mention, for a local function handed to an executor) starts
    workers in `function`: the tree's driver classes, and the local functions that
    build one (derived once per function: `shape.local_builders`)."""
    drivers = frozenset(revision.driver_fqns)
    return drivers | local_builders(function, drivers)


@dataclass
class Branch:
    test: ast.expr
    holds: bool
    value: Value


@functools.lru_cache(maxsize=1024)
def file_in_tree(file: str, root: Path) -> str:
    """`file` as messages name it: relative to the tree's folder where it is inside it
    (worked out once per file: every helper a walk runs starts a walk of its own)."""
    try:
        return str(Path(file).resolve().relative_to(root.resolve()))
    except ValueError:
        return file


class SetupWalk:
    """One function body, statement by statement, until its workers start."""

    FOLLOWS_HELPERS = True  # the rules of the tree's functions it calls are walked too

    def __init__(self, function: Function, scope: Scope, root: Path,
                 stops: frozenset[str], tree: SourceTree, depth: int = 0) -> None:
        self.function = function
        self.depth = depth  # helpers this walk is inside of (`_into_helpers`)
        self.started = False  # it stopped where workers start
        self.scope = scope
        self.root = root
        self.stops = stops
        self.tree = tree
        self.budget = Budget()  # the loop turns of every helper this walk runs
        self._evaluator: HelperEvaluator | None = None
        self.rules: list[TreeRule] = []
        self.stopped = False
        self.walked = 0
        self.cut: int | None = None  # the line the walk stopped at, past MAX_STATEMENTS
        # What a helper's walk returns (its first `return`, where decided), and by call: a
        # helper the runner cannot run whole (`configure_generation_config` reads the
        # tokenizer) still returns the block it edited in place.
        self.returned: Value | None = None
        self.results: dict[int, Value] = {}
        self.name = (function.qualname if "." in function.qualname
                     else f"{function.module.rsplit('.', 1)[-1]}.{function.qualname}")
        self.file = file_in_tree(function.file, root)

    def run(self) -> None:
        self._body(self.function.node.body, [], None)

    def evaluator(self) -> HelperEvaluator:
        """What the walk evaluates with: the tree's small helpers are run on the config's
        values (`interpret.helpers`), as the world size's walk runs them. One per walk: it
        holds nothing but the walk's scope, tree, module and loop budget."""
        if self._evaluator is None:
            self._evaluator = HelperEvaluator(self.scope, self.tree, 0, self.function.module,
                                              self.budget)
        return self._evaluator

    def _body(self, body: list[ast.stmt], guards: list[Branch], unsure: str | None) -> None:
        for stmt in body:
            if self.stopped:
                return
            self.walked += 1
            if self.walked > MAX_STATEMENTS:
                self.stopped = True
                self.cut = stmt.lineno
                return
            self.statement(stmt, guards, unsure)

    def statement(self, stmt: ast.stmt, guards: list[Branch], unsure: str | None) -> None:
        evaluate = self.evaluator().value
        if isinstance(stmt, ast.If):
            test = evaluate(stmt.test)
            holds = truth(test)
            if holds is not None and unsure is None:
                self._body(stmt.body if holds else stmt.orelse,
                           [*guards, Branch(stmt.test, holds, test)], None)
                return
            reason = unsure or _why(test, stmt.test)
            before = dict(self.scope.names)
            self._body(stmt.body, [*guards, Branch(stmt.test, True, test)], reason)
            after_body = self.scope.names
            self.scope.names = dict(before)
            self._body(stmt.orelse, [*guards, Branch(stmt.test, False, test)], reason)
            self.scope.names = _joined(after_body, self.scope.names, reason)
            return
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            self._body(stmt.body, guards, unsure)
            return
        if isinstance(stmt, ast.Try):
            # What its handlers catch does not refuse the config: undecided inside.
            caught = unsure or ("it runs inside a try whose handlers may catch it"
                                if stmt.handlers else None)
            self._body(stmt.body, guards, caught)
            self._body(stmt.orelse, guards, unsure)
            self._body(stmt.finalbody, guards, unsure)
            return
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            why = self._follow(stmt, guards, unsure)
            if why is not None:
                self._loop(stmt, guards, why)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self._import(stmt)
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return  # defined, not run here
        if not isinstance(stmt, _SIMPLE):
            self._loop(stmt, guards, unknown_shape(stmt, self.file))
            return
        if self.starts_workers(stmt):
            self.stopped = self.started = True
            return
        self._mutated(stmt, unsure)
        self._into_helpers(stmt, unsure)
        if self.stopped:
            return
        if isinstance(stmt, ast.Assert):
            self._assert(stmt, guards, unsure)
        elif isinstance(stmt, ast.Raise):
            self._raise(stmt, guards, unsure)
        elif isinstance(stmt, ast.Return):
            if unsure is None:
                self.stopped = True
                if self.returned is None and stmt.value is not None:
                    self.returned = self.evaluator().value(stmt.value)
            else:
                self.returned = Unknown(f"{self.name} returns only where {unsure}")
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self.assign(stmt, unsure)

    # -- statements ----------------------------------------------------------------

    def assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign,
                unsure: str | None) -> None:
        evaluate = self.evaluator().value
        if isinstance(stmt, ast.AugAssign):
            value: Value = evaluate(ast.BinOp(left=_load(stmt.target), op=stmt.op,
                                              right=stmt.value))
            targets: list[ast.expr] = [stmt.target]
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                return
            value = evaluate(stmt.value)
            targets = [stmt.target]
        else:
            value, targets = evaluate(stmt.value), list(stmt.targets)
        if isinstance(value, Unknown) and id(stmt.value) in self.results:
            value = self.results[id(stmt.value)]  # the helper's walk knows what it returns
        for target in targets:
            self._bind(target, value, unsure)

    def _bind(self, target: ast.expr, value: Value, unsure: str | None) -> None:
        if isinstance(target, ast.Subscript) and is_environ(target.value, self.scope):
            key = self.evaluator().value(target.slice)
            environ = self.scope.environ
            if isinstance(key, Known) and isinstance(key.value, str):
                if unsure is not None or not isinstance(value, Known):
                    environ.unsure[key.value] = (
                        f"the tree sets ${key.value} only where {unsure}" if unsure
                        else f"the tree sets ${key.value} to a value this check cannot "
                             "compute")
                else:
                    environ.overlay[key.value] = str(value.value)
                    environ.unsure.pop(key.value, None)
            return
        if isinstance(target, ast.Attribute) and self._assign_field(target, value, unsure):
            return
        name = _target_name(target)
        if name is not None:
            self.scope.names[name] = value
            return
        if isinstance(target, ast.Subscript):
            self._assign_item(target, value, unsure)
            return
        items = value.value if isinstance(value, Known) else None
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(items, (list, tuple)) \
                and len(items) == len(target.elts) and not any(
                    isinstance(e, ast.Starred) for e in target.elts):
            for element, item in zip(target.elts, items, strict=True):
                assert isinstance(value, Known)
                self._bind(element, Known(item, None, value.reads, value.env), unsure)
            return
        for sub in ast.walk(target):  # `a, b = ...`, `x[i] = ...`: what they bind is unknown
            sub_name = _target_name(sub) if isinstance(sub, (ast.Name, ast.Attribute)) else None
            if sub_name is not None and isinstance(getattr(sub, "ctx", None), ast.Store):
                self.scope.names[sub_name] = Unknown(
                    f"{sub_name} is unpacked or assigned by item, which this check does "
                    "not follow")

    def _into_helpers(self, stmt: ast.stmt, unsure: str | None) -> None:
        """A function of the tree that this statement calls on a config block
        (`normalize_vllm_refit_config(generation_config)`) runs its own rules before any
        worker starts: its body is walked too, its parameters bound to the call's values,
        its rules said at its own file:line. Helpers of helpers are walked `MAX_HELPER_DEPTH`
        deep; a helper that starts workers stops this walk too."""
        if not self.FOLLOWS_HELPERS or self.depth >= MAX_HELPER_DEPTH or not isinstance(
                stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Assert)):
            return
        for node in shape_of(stmt).calls:
            if any(
                    isinstance(a, ast.Starred) for a in node.args) or any(
                    k.arg is None for k in node.keywords):
                continue
            evaluator = self.evaluator()
            helper = evaluator.helper_function(node.func)
            if helper is None or "." in helper.qualname or helper.node is self.function.node:
                continue
            values = [evaluator.value(a) for a in node.args]
            named = {k.arg: evaluator.value(k.value) for k in node.keywords if k.arg}
            if not any(isinstance(v, Known) and v.path is not None
                       for v in (*values, *named.values())):
                continue  # no config block goes in: not a rule on the config
            bound = _bound(helper, values, named)
            if bound is None:
                continue
            module = self.tree.module(helper.module)
            walk = SetupWalk(helper, walk_scope(helper, module, self.scope.environ, bound),
                             self.root, self.stops, self.tree, self.depth + 1)
            walk.scope.fields = self.scope.fields
            walk.budget = self.budget
            walk.walked = self.walked
            walk._body(helper.node.body, [], unsure)
            self.walked = walk.walked
            self.rules.extend(walk.rules)
            if walk.returned is not None:
                self.results[id(node)] = walk.returned
            self.cut = self.cut if walk.cut is None else walk.cut
            if walk.started:
                self.stopped = self.started = True
                return

    def _assign_item(self, target: ast.Subscript, value: Value, unsure: str | None) -> None:
        """`cfg["megatron_cfg"]["train_iters"] = n`: the block the walk holds changes in
        place, as the tree's does (every name bound to it sees it: the walk's config is its
        own copy). Where the key or the value is not known, or the branch is not decided,
        every name that holds the block no longer has a value this check knows."""
        evaluate = self.evaluator().value
        self._store(target, evaluate(target.value), evaluate(target.slice), value, unsure)

    def _assign_field(self, target: ast.Attribute, value: Value, unsure: str | None) -> bool:
        """`config.distillation.max_val_samples = n` on a config block the walk holds (a
        config model's field is its key); False where the target is not one."""
        container = self.evaluator().value(target.value)
        if not (isinstance(container, Known) and container.path is not None
                and isinstance(container.value, dict)):
            return False
        self._store(target, container, Known(target.attr), value, unsure)
        return True

    def _store(self, target: ast.expr, container: Value, key: Value, value: Value,
               unsure: str | None) -> None:
        """The block changes in place. A value this check does not compute, or one set
        only under a test the config does not decide, is held at its key as `Unknown`:
        what reads that key is undecided, the rest of the block stays known. An unknown
        key: every name that holds the block no longer has a value this check knows."""
        if not isinstance(container, Known) or not isinstance(container.value, dict):
            return  # nothing the walk holds changes
        if isinstance(key, Known):
            held: object = value.value if unsure is None and isinstance(value, Known) else \
                Unknown(f"{_text(target)} is assigned at {self.file}:{target.lineno} " + (
                    f"only where {unsure}" if unsure is not None
                    else f"a value this check does not compute ({_reason(value)})"),
                    value.reads, value.env)
            try:
                container.value[key.value] = held
                return
            except TypeError:
                pass
        self._forget(container.value, f"{_text(target)} is assigned " + (
            f"only where {unsure}" if unsure else "a value this check does not compute"))

    def _mutated(self, stmt: ast.stmt, unsure: str | None) -> None:
        """A block changed in place by a call (`generation_config.setdefault(...)`,
        `cfg.update(...)`, `.pop(...)`): on known arguments, where the walk is sure it
        runs, the walk's copy changes as the run's does; otherwise every name that holds
        it is no longer known."""
        for node in shape_of(stmt).calls:
            if isinstance(node.func, ast.Attribute) and node.func.attr in _IN_PLACE:
                receiver = self.evaluator().value(node.func.value)
                if isinstance(receiver, Known) and isinstance(receiver.value, (dict, list)):
                    if unsure is None and self._applied(receiver.value, node):
                        continue
                    self._forget(receiver.value, f"{_text(node.func)}() changes it in place")

    def _applied(self, block: dict[Any, Any] | list[Any], call: ast.Call) -> bool:
        """`d.pop(k[, default])`, `d.setdefault(k, v)`, `d.update(known)` with values the
        walk knows (plain data, no held unknowns): done on the walk's copy."""
        assert isinstance(call.func, ast.Attribute)
        if not isinstance(block, dict) or call.keywords or call.func.attr not in _APPLIED:
            return False
        args = [self.evaluator().value(a) for a in call.args]
        if any(not isinstance(a, Known) or isinstance(a.value, Unknown) for a in args):
            return False
        try:
            getattr(block, call.func.attr)(*[copy.deepcopy(a.value) for a in args
                                             if isinstance(a, Known)])
        except Exception:
            return False
        return True

    def _forget(self, changed: object, reason: str) -> None:
        for name, held in list(self.scope.names.items()):
            if isinstance(held, Known) and _holds(held.value, changed):
                self.scope.names[name] = Unknown(f"{name} changes: {reason}", held.reads,
                                                 held.env)

    def _follow(self, stmt: ast.For | ast.AsyncFor | ast.While, guards: list[Branch],
                unsure: str | None) -> str | None:
        """Run a `for` over a sequence the config decides (`for tcfg in teacher_configs:`),
        turn by turn, where its body has no early exit and starts no workers: a rule in it
        is judged on every turn, and said once (a refusal on any turn refuses). Where the
        loop is not followed, why."""
        if not isinstance(stmt, ast.For) or stmt.orelse or unsure is not None or shape_of(
                    stmt).exits or self.starts_workers(
                    stmt):
            return unsure or "it runs in a loop, which this check does not follow"
        sequence = self.evaluator().value(stmt.iter)
        if isinstance(sequence, Unknown):
            return f"it runs in a loop over {_text(stmt.iter)}, which is not decided " \
                   f"by the config ({sequence.reason})"
        if isinstance(sequence.value, Environ) or not isinstance(
                sequence.value, (list, tuple, set, dict, str)) or len(
                    sequence.value) > MAX_TURNS:
            return "it runs in a loop, which this check does not follow"
        judged: dict[str, TreeRule] = {}
        outside = self.rules
        for item in list(sequence.value):
            self.rules = []
            self._bind(stmt.target, Known(item, None, sequence.reads, sequence.env), None)
            self._body(stmt.body, guards, None)
            for rule in self.rules:
                kept = judged.get(rule.where)
                if kept is None or _SEVERITY[rule.verdict] > _SEVERITY[kept.verdict]:
                    judged[rule.where] = rule
            if self.stopped:
                break
        self.rules = [*outside, *judged.values()]
        return None

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        """A function-level import binds its names for the calls after it
        (`from nemo_rl.models.policy.teacher_worker_group import create_teacher_...`)."""
        bound = import_bindings(stmt, self.function.module, is_package_file(self.function.file))
        self.scope.imports = {**self.scope.imports, **bound}

    def _loop(self, stmt: ast.stmt, guards: list[Branch], reason: str) -> None:
        """A body not followed statement by statement (a loop, an unknown shape): its
        rules are undecided with `reason`, what it binds unknown."""
        for node in shape_of(stmt).nodes:
            if isinstance(node, (ast.Assert, ast.Raise)):
                self.rules.append(self._rule(node, guards, "undecided", reason, (), ()))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.scope.names[node.id] = Unknown(f"{node.id} is assigned in a loop: "
                                                    f"{reason.removeprefix('it ')}")
            elif isinstance(node, ast.Call) and called_name(node) in self.stops:
                self.stopped = True

    def _assert(self, stmt: ast.Assert, guards: list[Branch], unsure: str | None) -> None:
        test = self.evaluator().value(stmt.test)
        env = (*test.env, *environment_read(stmt.test, self.scope))
        # What the guards above it read decided that it runs: said with the values.
        around = tuple(r for g in guards for r in g.value.reads)
        env = (*env, *(e for g in guards for e in (*g.value.env, *environment_read(
            g.test, self.scope))))
        if unsure is not None:
            self.rules.append(self._rule(stmt, guards, "undecided", unsure, test.reads, env))
            return
        if isinstance(test, Unknown):
            self.rules.append(self._rule(stmt, guards, "undecided", test.reason, test.reads,
                                         env))
            return
        if not test.reads:
            self.rules.append(self._rule(stmt, guards, "undecided", _no_config(env),
                                         test.reads, env))
            return
        holds = truth(test)
        verdict: Verdict = "undecided" if holds is None else "passes" if holds else "refuses"
        self.rules.append(self._rule(stmt, guards, verdict, "its truth cannot be told",
                                     tuple(dict.fromkeys((*test.reads, *around))), env))

    def _raise(self, stmt: ast.Raise, guards: list[Branch], unsure: str | None) -> None:
        if not guards:
            return  # a raise no test leads to is not a rule on the config
        reads = tuple(dict.fromkeys(r for g in guards for r in g.value.reads))
        env = tuple(dict.fromkeys([*(e for g in guards for e in g.value.env),
                                   *(e for g in guards for e in environment_read(
                                       g.test, self.scope))]))
        if unsure is not None:
            self.rules.append(self._rule(stmt, guards, "undecided", unsure, reads, env))
            return
        if not guards[-1].value.reads:  # the test right above it reads no config value
            self.rules.append(self._rule(stmt, guards, "undecided",
                                         _no_config((*guards[-1].value.env,
                                                     *environment_read(guards[-1].test,
                                                                       self.scope))),
                                         reads, env))
            return
        self.rules.append(self._rule(stmt, guards, "refuses", "", reads, env))

    def _rule(self, stmt: ast.Assert | ast.Raise, guards: list[Branch], verdict: Verdict,
              reason: str, reads: tuple[Read, ...], env: tuple[str, ...]) -> TreeRule:
        if isinstance(stmt, ast.Assert):
            condition, message, exception = _text(stmt.test), self._message(stmt.msg), \
                "AssertionError"
        else:
            own = [g for g in guards if g.value.reads or g.value.env or environment_read(
                g.test, self.scope)] or guards[-1:]
            condition = " and ".join(_text(g.test) if g.holds else f"not ({_text(g.test)})"
                                     for g in own)
            exception, message = _exception(stmt, self)
        return TreeRule(where=f"{self.file}:{stmt.lineno}", function=self.name,
                        condition=condition, message=message, verdict=verdict, reason=reason,
                        reads=reads, env=tuple(dict.fromkeys(env)), exception=exception)

    def _message(self, node: ast.expr | None) -> str:
        if node is None:
            return "(no message)"
        return _shorten(_render(node, self.evaluator()))

    # A driver class named only to reach an attribute of it (`MegatronGeneration.
    # init_cluster_placement_groups(...)`) starts workers here: it may allocate.
    STATIC_CALLS_START = True

    def starts_workers(self, stmt: ast.stmt) -> bool:
        return starts(stmt, self.stops, self.STATIC_CALLS_START).holds(self.scope.names)


def _exception(stmt: ast.Raise, walk: SetupWalk) -> tuple[str, str]:
    exc = stmt.exc
    if isinstance(exc, ast.Call):
        name = _text(exc.func)
        message = walk._message(exc.args[0]) if exc.args else "(no message)"
        return name, message
    return (_text(exc) if exc is not None else "the exception being handled"), "(no message)"


def _render(node: ast.expr, evaluator: Evaluator) -> str:
    """A message as the tree would print it, with the parts the config gives filled in
    and the others left as `{expression}`."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                parts.append(_formatted(part, evaluator))
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _render(node.left, evaluator) + _render(node.right, evaluator)
    value = evaluator.value(node)
    if isinstance(value, Known) and isinstance(value.value, str):
        return value.value
    return _text(node)


_CONVERSIONS: dict[int, Callable[[object], str]] = {ord("r"): repr, ord("s"): str,
                                                     ord("a"): ascii}
_HUGE_SPEC = re.compile(r"\d{4,}")  # a width or precision of thousands (hostile source)


def _formatted(part: ast.FormattedValue, evaluator: Evaluator) -> str:
    """One `{expression!conversion:spec}` of a message as the tree prints it: the config's
    value converted and formatted as Python would (`{dp:.3f}` is `0.500`, not `0.5`);
    `{expression}` where the config does not give it, or where the spec is one this check
    does not apply (a width of thousands of characters, a spec Python refuses)."""
    value = evaluator.value(part.value)
    unknown = "{" + _text(part.value) + "}"
    if not isinstance(value, Known) or not isinstance(value.value, (str, int, float, bool)):
        return unknown
    if part.conversion == -1 and part.format_spec is None:
        # the message is shortened as a whole; a number is shown as the config has it
        return value.value if isinstance(value.value, str) else show_value(value.value)
    spec = _render(part.format_spec, evaluator) if part.format_spec is not None else ""
    if _HUGE_SPEC.search(spec):
        return unknown
    convert = _CONVERSIONS.get(part.conversion)
    try:
        return format(convert(value.value) if convert else value.value, spec)
    except (ValueError, TypeError):  # a spec the value refuses, a number too long to show
        return unknown


def _shorten(text: str) -> str:
    text = re.sub(r"-{4,}|={4,}", " ", text)
    text = " ".join(text.split())
    if len(text) <= MAX_MESSAGE:
        return text
    return f"{text[:MAX_MESSAGE]}... ({len(text) - MAX_MESSAGE} more characters not shown)"


def _reason(value: Value) -> str:
    return value.reason if isinstance(value, Unknown) else "its truth cannot be told"


def _no_config(env: Sequence[str]) -> str:
    if env:
        names = ", ".join(f"${name}" for name in dict.fromkeys(env))
        return (f"its test reads no config value, only the environment ({names}), which "
                "is the run's machine's, not the config's")
    return "its test reads no config value"


def _why(value: Value, test: ast.expr) -> str:
    reason = value.reason if isinstance(value, Unknown) else "its truth cannot be told"
    return f"{_text(test)} is not decided by the config ({reason})"


def _joined(one: dict[str, Value], other: dict[str, Value], reason: str) -> dict[str, Value]:
    """The names after an `if` the config does not decide: a name both branches leave
    alike keeps its value; one they set differently is unknown."""
    out: dict[str, Value] = {}
    for name in {*one, *other}:
        a, b = one.get(name), other.get(name)
        if a is not None and a == b:
            out[name] = a
        elif isinstance(a, Known) and isinstance(b, Known) and _same(a.value, b.value):
            out[name] = a
        else:
            out[name] = Unknown(f"{name} is set differently where {reason}")
    return out


def _same(a: object, b: object) -> bool:
    try:
        return type(a) is type(b) and a == b
    except Exception:
        return False


# The statements walked one by one (the compound ones are handled above): any other type
# (`match`, `try`/`except*`, what a later Python adds) is an unknown shape (`strict`).
_SIMPLE = (ast.Assert, ast.Raise, ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign,
           ast.Expr, ast.Pass, ast.Delete, ast.Global, ast.Nonlocal, ast.Break, ast.Continue)
_IN_PLACE = frozenset({"setdefault", "update", "pop", "popitem", "clear", "append", "extend",
                       "insert", "remove", "__setitem__", "__delitem__"})
_APPLIED = frozenset({"setdefault", "update", "pop"})  # followed on known arguments
MAX_HELD = 10_000  # values looked through for a changed block (a config is far smaller)


def _holds(value: object, changed: object) -> bool:
    """Whether `value` is `changed` or holds it (by identity, through dicts and lists)."""
    stack, seen = [value], 0
    while stack and seen < MAX_HELD:
        current = stack.pop()
        seen += 1
        if current is changed:
            return True
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, (list, tuple)):
            stack.extend(current)
    return seen >= MAX_HELD  # too big to look through: said changed


def _target_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return f"{target.value.id}.{target.attr}"
    return None


def _load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(value=target.value, attr=target.attr, ctx=ast.Load())
    return target


def _text(node: ast.AST) -> str:
    return short_text(node, 120)