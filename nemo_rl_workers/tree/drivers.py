"""The driver side of a NeMo-RL tree, read from its source model.

For every class that dispatches to workers: the worker classes it can start (the FQN
strings its selection code names, the quantized counterparts from the override maps),
each with the switches that select it; and every call it makes by name, with the
method name(s), the keywords sent, the switches it runs under and whether its result
is read as a stream. What cannot be told from the source is an `Unresolved` entry,
never dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from nemo_rl_workers.tree.actor_lookups import explicit_executable, looked_up
from nemo_rl_workers.tree.conditions import (
    ALWAYS,
    Condition,
    condition_of,
    contradictory,
    restrict,
    test_holds,
)
from nemo_rl_workers.tree.knowledge import (
    ACTOR_ENVIRONMENT_REGISTRIES,
    DISPATCH_HELPERS,
    DRIVER_OWNERS,
    HANDLE_ATTRIBUTES,
    OVERRIDE_MAP_SUFFIX,
    OWNERS,
    STREAM_PROXY_KEYWORD,
    STREAMING_OPTION,
    WORKER_GROUP_ATTRIBUTE,
    WORKER_SELECTORS,
    DispatchHelper,
    Owner,
    makes_actor,
)
from nemo_rl_workers.tree.source import (
    CallSite,
    ClassInfo,
    Function,
    Resolver,
    SourceTree,
    resolve_local,
)
from nemo_rl_workers.tree.source.imports import function_imports
from nemo_rl_workers.tree.source.resolve import dotted_name, resolve_fqn

MAX_DEPTH = 4
ACTOR_PREFIX = "actor:"  # a handle source that names the one class its actors are


@dataclass(frozen=True)
class WorkerChoice:
    """A worker class a driver can start, and when."""

    fqn: str
    condition: Condition
    where: str  # where the driver names it
    quantized: bool = False


@dataclass
class Driver:
    """A class that starts workers and calls them by name."""

    name: str
    fqn: str
    where: str
    choices: list[WorkerChoice] = field(default_factory=list)

    @property
    def switches(self) -> set[str]:
        return {name for choice in self.choices for name, _ in choice.condition}


@dataclass(frozen=True)
class Dispatch:
    """One resolved call of a worker method by name."""

    driver: str  # the calling class's name
    function: str  # the calling function's qualname, e.g. "Policy.train"
    owner: str  # the driver whose workers receive it
    method: str
    condition: Condition
    keywords: frozenset[str]
    open_keywords: bool  # some keywords come from an unknown `**mapping`
    positional: int  # positional arguments (direct `.remote(...)` calls only)
    stream: bool | None  # read as a stream (True), as a value (False), unknown (None)
    call: str  # file:line where the method name is given
    helper: str
    via: str | None = None  # file:line of the dispatch, when the name came through a helper
    worker: str | None = None  # the one class the handle holds, when the call names it


@dataclass(frozen=True)
class Unresolved:
    """A dispatch call site whose method name or workers cannot be told from source."""

    driver: str
    function: str
    call: str
    helper: str
    reason: str


@dataclass
class DriverSide:
    drivers: dict[str, Driver] = field(default_factory=dict)
    dispatches: list[Dispatch] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    sites: int = 0  # dispatch call sites seen
    environments: dict[str, str] = field(default_factory=dict)  # actor FQN -> env, if found
    # actor FQN -> the module whose registry entry names its environment (`environments`)
    registered_in: dict[str, str] = field(default_factory=dict)
    # Registries that could not be evaluated whole ("file: why"): the entries above may
    # then lack classes the tree registers.
    registry_problems: list[str] = field(default_factory=list)
    # worker method -> the calls that reach it by name: (call, dispatch helper or "remote"
    # for a direct call, the driver whose workers receive it, the one class its handle
    # holds if known): where the arguments a worker method gets are read.
    sites_of: dict[str, list[tuple[CallSite, str, str, str | None]]] = field(
        default_factory=dict)
    # actor FQN -> (the Python environment a `py_executable` names for it, file:line)
    py_executables: dict[str, tuple[str, str]] = field(default_factory=dict)


# -- values: literal strings and where they come from ----------------------------------

# (value, condition, where) -- `where` None means "at the expression itself".
Named = tuple[str, Condition, str | None]


class _Values:
    """String values an expression can have, with the switches each needs."""

    def __init__(self, tree: SourceTree, resolver: Resolver) -> None:
        self.tree = tree
        self.resolver = resolver

    def strings(self, node: ast.expr, function: Function | None, cls: ClassInfo | None,
                depth: int = 0, *, lenient: bool = False) -> list[Named] | None:
        """The strings `node` can be; None if some value is not a string literal. With
        `lenient`, assignments that are not literals are passed over (a selection
        variable re-bound through a resolver call keeps its literal values)."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            return [(node.value, ALWAYS, None)] if isinstance(node.value, str) else None
        if isinstance(node, ast.IfExp):
            out: list[Named] = []
            for branch, holds in ((node.body, True), (node.orelse, False)):
                found = self.strings(branch, function, cls, depth + 1)
                if found is None:
                    return None
                cond = frozenset(test_holds(node.test, holds, function))
                out.extend((v, c | cond, w) for v, c, w in found)
            return out
        if isinstance(node, ast.Name) and function is not None:
            assigned = function.assignments.get(node.id)
            if not assigned:
                return None
            out = []
            for assignment in assigned:
                found = self.strings(assignment.value, function, cls, depth + 1, lenient=lenient)
                if found is None:
                    if lenient:
                        continue
                    return None
                cond = condition_of(assignment.guards, function)
                out.extend((v, c | cond, w) for v, c, w in found)
            return out
        if (isinstance(node, ast.Call) and not node.args and not node.keywords
                and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "self" and cls is not None):
            # `self._rpc_name()`: a method that returns a literal (or a conditional one).
            found_method = self.resolver.find_method(cls, node.func.attr)
            if found_method is None:
                return None
            method, owner = found_method
            returns = [n.value for n in ast.walk(method.node)
                       if isinstance(n, ast.Return) and n.value is not None]
            if not returns:
                return None
            out = []
            for value in returns:
                found = self.strings(value, method, owner, depth + 1)
                if found is None:
                    return None
                out.extend(found)
            return out
        return None


# -- reading the driver side -----------------------------------------------------------


def _receiver(call: CallSite) -> ast.expr | None:
    func = call.node.func
    return func.value if isinstance(func, ast.Attribute) else None


def _text(node: ast.expr) -> str:
    return ast.unparse(node)


_RESULTS_READER = "get_all_worker_results"
# A function's result readers by their first argument's key, with their place in the tree.
_Readers = dict[object, list[tuple[int, CallSite]]]


def _top_class(call: CallSite) -> str | None:
    return call.cls.split(".")[0] if call.cls else None


class DriverReader:
    """Reads the driver side of one tree (see the module docstring)."""

    def __init__(self, tree: SourceTree, resolver: Resolver) -> None:
        self.tree = tree
        self.resolver = resolver
        self.values = _Values(tree, resolver)
        self.side = DriverSide()
        self.overrides = self._override_maps()
        self._calls_by_name: dict[str, list[CallSite]] = {}
        # Per function, the calls that read a dispatch's result (`ray.get(...)`,
        # `get_all_worker_results(...)`) by what their first argument is: the call node
        # itself, or a local name; so a dispatch finds its readers without a scan of
        # every call in its function (a function of 20k dispatches stays linear).
        self._readers_in: dict[tuple[str, str | None], _Readers] = {}
        self._loops: dict[tuple[str, str], dict[str, list[ast.expr]]] = {}
        self._sites_seen: set[tuple[str, int, str, str, str | None]] = set()
        self._attribute_actors: dict[tuple[str, str], str | None] = {}
        self._imports_in: dict[tuple[str, str], dict[str, str]] = {}
        for position, call in enumerate(tree.calls):
            self._index_reader(position, call)
            func = call.node.func
            name = func.attr if isinstance(func, ast.Attribute) else (
                func.id if isinstance(func, ast.Name) else None)
            if name is not None:
                self._calls_by_name.setdefault(name, []).append(call)

    def _index_reader(self, position: int, call: CallSite) -> None:
        func = call.node.func
        if not (call.node.args and isinstance(func, ast.Attribute)
                and (func.attr == "get" or func.attr.endswith(_RESULTS_READER))):
            return
        callee = call.callee
        if callee != "ray.get" and not callee.endswith(_RESULTS_READER):
            return
        first = call.node.args[0]
        key: object = ("name", first.id) if isinstance(first, ast.Name) else ("node", id(first))
        readers = self._readers_in.setdefault((call.module, call.function), {})
        readers.setdefault(key, []).append((position, call))

    def read(self) -> DriverSide:
        self._choices()
        self._environments()
        for call in self.tree.calls:
            helper_name = self._dispatch_helper(call)
            if helper_name is not None:
                self._dispatch(call, helper_name)
            elif (target := self._handle_call(call)) is not None:
                self._direct(call, *target)
            elif (named := self._getattr_call(call)) is not None:
                self._direct_by_name(call, *named)
        return self.side

    # -- the worker classes each driver can start

    def _override_maps(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for module in self.tree.modules.values():
            for name, value in module.assignments.items():
                if name.endswith(OVERRIDE_MAP_SUFFIX) and isinstance(value, ast.Dict):
                    for key, target in zip(value.keys, value.values, strict=True):
                        if isinstance(key, ast.Constant) and isinstance(target, ast.Constant) \
                                and isinstance(key.value, str) and isinstance(target.value, str):
                            out[key.value] = target.value
        return out

    def _environments(self) -> None:
        self._dict_registries()
        # `ACTOR_ENVIRONMENT_REGISTRY["pkg.Cls"] = env`: a package (the tree's or one
        # under --path) adding its classes on import, or a script before it starts them.
        for module in self.tree.modules.values():
            for name in ACTOR_ENVIRONMENT_REGISTRIES:
                for item in module.item_assignments.get(name, []):
                    self.side.environments[item.name] = _text(item.value)
                    self.side.registered_in[item.name] = module.name
        # `ACTOR_ENVIRONMENT_REGISTRY.update(...)`: its literal keys, else it may add any.
        for call in self.tree.calls:
            func = call.node.func
            if not (isinstance(func, ast.Attribute) and func.attr == "update"
                    and _text(func.value) in ACTOR_ENVIRONMENT_REGISTRIES):
                continue
            given = call.node.args[0] if len(call.node.args) == 1 else None
            if given is not None and _text(given) in ACTOR_ENVIRONMENT_REGISTRIES:
                continue  # one registry merged into another: both read already
            entries = [(k.value, v) for k, v in zip(given.keys, given.values, strict=True)
                       if isinstance(k, ast.Constant) and isinstance(k.value, str)
                       ] if isinstance(given, ast.Dict) else []
            if isinstance(given, ast.Dict) and not call.node.keywords and len(entries) == len(
                    given.keys):
                for key, env in entries:
                    self.side.environments[key] = _text(env)
                    self.side.registered_in[key] = call.module
            else:
                self.side.registry_problems.append(
                    f"{call.where}: {_text(func)}(...) adds entries the source does not name")

    def _dict_registries(self) -> None:
        for module, name in ((m, n) for m in self.tree.modules.values()
                             for n in ACTOR_ENVIRONMENT_REGISTRIES):
            value = module.assignments.get(name)
            if value is None:
                continue
            where = f"{module.file}:{getattr(value, 'lineno', 0)}"
            if not isinstance(value, ast.Dict):
                self.side.registry_problems.append(
                    f"{where}: {name} is {_text(value)[:60]!r}, not a dict the source shows")
                continue
            for key, env in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    self.side.environments[key.value] = _text(env)
                    self.side.registered_in[key.value] = module.name
                else:
                    shown = f"**{_text(env)}" if key is None else _text(key)
                    self.side.registry_problems.append(
                        f"{where}: {name} has an entry {shown[:60]!r} whose class the source "
                        "does not name")

    def _driver(self, call: CallSite) -> Driver | None:
        top = _top_class(call)
        if top is None:
            return None
        fqn = f"{call.module}.{top}"
        info = self.tree.classes.get(fqn)
        if info is None:
            return None
        if fqn not in self.side.drivers:
            self.side.drivers[fqn] = Driver(top, fqn, info.where)
        return self.side.drivers[fqn]

    def _add_choice(self, driver: Driver, fqn: str, condition: Condition, where: str) -> None:
        if contradictory(condition) or resolve_fqn(self.tree, fqn) is None and "." not in fqn:
            return
        if any(c.fqn == fqn and c.condition == condition for c in driver.choices):
            return
        choices = [WorkerChoice(fqn, condition, where)]
        if fqn in self.overrides:
            choices.append(WorkerChoice(self.overrides[fqn], condition, where, quantized=True))
        for choice in choices:
            if choice not in driver.choices:
                driver.choices.append(choice)

    def _choices(self) -> None:
        for call in self.tree.calls:
            func = call.node.func
            name = func.attr if isinstance(func, ast.Attribute) else (
                func.id if isinstance(func, ast.Name) else None)
            function = self.tree.function_of(call)
            if name in WORKER_SELECTORS and call.node.args:
                driver = self._driver(call)
                if driver is None:
                    continue
                cls = self.tree.classes.get(driver.fqn)
                found = self.values.strings(call.node.args[0], function, cls, lenient=True)
                named = [(v, c) for v, c, _ in found or ()]
                # Older trees pass the class object itself (directly, by a conditional,
                # through a local).
                named += self._class_values(call.node.args[0], function, call)
                for value, cond in named:
                    if resolve_fqn(self.tree, value) is not None:
                        self._add_choice(driver, value, cond | condition_of(call.guards, function),
                                         call.where)
            elif name == "remote":
                created = self._actor_class(call)
                driver = self._driver(call) if created is not None else None
                if created is not None and driver is not None:
                    self._add_choice(driver, created.fqn, condition_of(call.guards, function),
                                     call.where)
                    self._explicit_env(call, function, created)
                elif created is None:
                    self._looked_up_choices(call, function)

    def _looked_up_choices(self, call: CallSite, function: Function | None) -> None:
        """Choices through a dict lookup (`self.WORKER_CLASS_DICT[key].remote()`): each
        class that binds the dict is a driver of the classes it holds."""
        for holder, worker in looked_up(self.tree, self.resolver, call, function):
            if holder.fqn not in self.side.drivers:
                self.side.drivers[holder.fqn] = Driver(holder.name, holder.fqn, holder.where)
            self._add_choice(self.side.drivers[holder.fqn], worker.fqn,
                             condition_of(call.guards, function), call.where)
            self._explicit_env(call, function, worker)

    def _explicit_env(self, call: CallSite, function: Function | None,
                      worker: ClassInfo) -> None:
        env = explicit_executable(call, function, worker)
        if env is not None:
            self.side.py_executables.setdefault(worker.fqn, (env, call.where))

    def _class_values(self, node: ast.expr, function: Function | None, call: CallSite,
                      depth: int = 0) -> list[tuple[str, Condition]]:
        """The tree classes an expression names as a class object, with the switches each
        needs: `Cls`, `module.Cls`, `A if cond else B`, a local assigned one of them."""
        if depth > MAX_DEPTH:
            return []
        if isinstance(node, ast.IfExp):
            out: list[tuple[str, Condition]] = []
            for branch, holds in ((node.body, True), (node.orelse, False)):
                cond = frozenset(test_holds(node.test, holds, function))
                out.extend((v, c | cond) for v, c in self._class_values(
                    branch, function, call, depth + 1))
            return out
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return []
        module = self.tree.modules.get(call.module)
        text = _text(node)
        head = text.split(".")[0]
        local = self._function_imports(call).get(head)
        if local is not None or module is not None and (
                head in module.imports or head in module.classes):
            dotted = f"{local}{text[len(head):]}" if local is not None else resolve_local(
                module, text) if module is not None else text
            info = resolve_fqn(self.tree, dotted)
            if info is not None:
                return [(info.fqn, ALWAYS)]
        if isinstance(node, ast.Name) and function is not None:
            out = []
            for assignment in function.assignments.get(node.id, []):
                cond = condition_of(assignment.guards, function)
                out.extend((v, c | cond) for v, c in self._class_values(
                    assignment.value, function, call, depth + 1))
            return out
        return []

    def _actor_class(self, call: CallSite) -> ClassInfo | None:
        """The class of `Cls.remote(...)` / `Cls.options(...).remote(...)`, in the tree;
        `Cls` may be made an actor class where it is used (`ray.remote(Cls)`,
        `ray.remote(num_cpus=1)(Cls)`) or through a local or module-level name bound to
        that (`actor_cls = ray.remote(Cls)`)."""
        target = _remote_target(call.node)
        return self._class_of(target, call, 0) if target is not None else None

    def _class_of(self, node: ast.expr, call: CallSite, depth: int) -> ClassInfo | None:
        if depth > MAX_DEPTH:
            return None
        module = self.tree.modules.get(call.module)
        if module is None:
            return None
        if isinstance(node, ast.Call):  # `ray.remote(Cls)`, `ray.remote(**options)(Cls)`
            maker = node.func.func if isinstance(node.func, ast.Call) else node.func
            if not makes_actor(_text(maker), module.imports) or len(node.args) != 1:
                return None
            return self._class_of(node.args[0], call, depth + 1)
        if not isinstance(node, ast.Name):
            return None
        local = self._function_imports(call).get(node.id)
        found = resolve_fqn(self.tree, local or resolve_local(module, node.id))
        if found is not None:
            return found
        function = self.tree.function_of(call)
        assigned = [a.value for a in function.assignments.get(node.id, [])] if (
            function is not None) else [v for v in (module.assignments.get(node.id),)
                                        if v is not None]
        classes = {c.fqn: c for value in assigned
                   if (c := self._class_of(value, call, depth + 1)) is not None}
        return next(iter(classes.values())) if len(classes) == 1 and len(
            assigned) == 1 else None

    def class_called(self, call: CallSite) -> ClassInfo | None:
        """The tree class a call constructs (`Cls(...)`, `module.Cls(...)`), resolved
        through the module's imports and those of its enclosing function; else None."""
        func = call.node.func
        if isinstance(func, ast.Name):
            return self._class_of(func, call, 0)
        dotted = dotted_name(func)
        module = self.tree.modules.get(call.module)
        if dotted is None or module is None:
            return None
        return resolve_fqn(self.tree, resolve_local(module, dotted))

    def _function_imports(self, call: CallSite) -> dict[str, str]:
        """Names the enclosing top-level function imports in its body (upstream imports
        actor classes lazily: `from nemo_rl.algorithms.async_utils import Collector`)."""
        if call.function is None:
            return {}
        top = call.function.split(".")[0] if call.cls is None else ".".join(
            call.function.split(".")[:2])
        key = (call.module, top)
        if key not in self._imports_in:
            function = self.tree.functions.get(key)
            module = self.tree.modules.get(call.module)
            self._imports_in[key] = function_imports(
                function.node, module.name, module.is_package
            ) if function is not None and module is not None else {}
        return self._imports_in[key]

    def choices_of(self, driver_name: str) -> tuple[Driver | None, list[WorkerChoice]]:
        """A driver (by class name) and its choices, inherited from a driver base class."""
        for driver in self.side.drivers.values():
            if driver.name != driver_name:
                continue
            if driver.choices:
                return driver, driver.choices
            info = self.tree.classes.get(driver.fqn)
            if info is not None:
                for base in self.resolver.mro(info).classes[1:]:
                    inherited = self.side.drivers.get(base.fqn)
                    if inherited is not None and inherited.choices:
                        return inherited, inherited.choices
        for driver in self.side.drivers.values():
            if driver.name == driver_name:
                return driver, driver.choices
        return None, []

    # -- which calls are dispatches, and to whose workers

    def _group_expr(self, node: ast.expr, function: Function | None, depth: int = 0) -> str | None:
        """The expression text of the worker group a receiver is, if it is one."""
        if isinstance(node, ast.Attribute) and node.attr == WORKER_GROUP_ATTRIBUTE:
            return _text(node)
        if isinstance(node, ast.Name) and function is not None and depth < MAX_DEPTH:
            assigned = function.assignments.get(node.id, [])
            if len(assigned) == 1:
                return self._group_expr(assigned[0].value, function, depth + 1)
        return None

    def _dispatch_helper(self, call: CallSite) -> str | None:
        func = call.node.func
        if not isinstance(func, ast.Attribute) or func.attr not in DISPATCH_HELPERS:
            return None
        helper = DISPATCH_HELPERS[func.attr]
        if self._group_expr(func.value, self.tree.function_of(call)) is None:
            return None
        if helper.sends_keywords is False and not call.node.args and \
                call.keyword(helper.name_keyword) is None:
            return None  # shutdown() without a cleanup method calls nothing
        return func.attr

    def _owner(self, call: CallSite, group: str) -> Owner | None:
        """Whose workers the group expression `group` holds."""
        me = _top_class(call)
        parts = group.split(".")
        if parts == ["self", WORKER_GROUP_ATTRIBUTE] and me is not None:
            return Owner(me)
        if len(parts) >= 2:
            attribute = parts[-2]
            if me is not None and (me, attribute) in DRIVER_OWNERS:
                return DRIVER_OWNERS[(me, attribute)]
            return OWNERS.get(attribute)
        return None

    def _handle_call(self, call: CallSite) -> tuple[str, str] | None:
        """(method, handle expression) for `handle.method[.options(...)].remote(...)` on
        a worker actor handle."""
        target = _remote_target(call.node)
        if not isinstance(target, ast.Attribute) or target.attr.startswith("__"):
            return None
        handle = self._handle_source(target.value, call)
        if handle is None:
            return None
        return target.attr, handle

    def _getattr_call(self, call: CallSite) -> tuple[ast.expr, str] | None:
        """(name expression, handle) for `getattr(handle, NAME)[.options(...)].remote(...)`
        on an actor handle, directly or through a local bound to the `getattr`."""
        target = _remote_target(call.node)
        function = self.tree.function_of(call)
        if isinstance(target, ast.Name) and function is not None:
            # `method = getattr(worker, name)` then `method.remote(...)`: one binding only.
            bound = function.assignments.get(target.id, [])
            target = bound[0].value if len(bound) == 1 else None
        if not (isinstance(target, ast.Call) and isinstance(target.func, ast.Name)
                and target.func.id == "getattr" and len(target.args) == 2):
            return None
        handle = self._handle_source(target.args[0], call)
        return (target.args[1], handle) if handle is not None else None

    def _handle_source(self, node: ast.expr, call: CallSite, depth: int = 0,
                       function: Function | None = None) -> str | None:
        """The expression a worker handle comes from (`self.worker_group.workers[0]`,
        `self.rollout_engines`, an actor of a class the tree defines), following local
        names, loop variables, comprehensions and helpers that return handles."""
        if depth > MAX_DEPTH:
            return None
        if function is None:
            function = self.tree.function_of(call)
        if isinstance(node, ast.Subscript):
            return self._handle_source(node.value, call, depth + 1, function)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self._handle_source(node.elt, call, depth + 1, function)
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            found = {self._handle_source(e, call, depth + 1, function) for e in node.elts}
            return found.pop() if len(found) == 1 else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("list", "tuple", "iter", "enumerate", "reversed") and node.args:
            return self._handle_source(node.args[0], call, depth + 1, function)
        if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Attribute) and node.func.attr in ("remote", "options")):
            helper = self._helper_of(node, call)
            if helper is not None:
                returns = [n.value for n in ast.walk(helper.node)
                           if isinstance(n, ast.Return) and n.value is not None]
                found = {self._handle_source(r, call, depth + 1, helper) for r in returns}
                return found.pop() if len(found) == 1 else None
        if isinstance(node, ast.Attribute) and _text(node).endswith(HANDLE_ATTRIBUTES):
            return _text(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "remote":
            created = self._created(node, call)
            return f"{ACTOR_PREFIX}{created}" if created is not None else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "self" and call.cls is not None:
            created = self._self_attribute_actor(call, node.attr)
            return f"{ACTOR_PREFIX}{created}" if created is not None else None
        if not isinstance(node, ast.Name):
            return None
        sources: list[ast.expr]
        if function is None:  # an entry script's top level: `gym = NemoGym.remote()`
            module = self.tree.modules.get(call.module)
            bound = module.assignments.get(node.id) if module is not None else None
            sources = [bound] if bound is not None else []
        else:
            sources = [a.value for a in function.assignments.get(node.id, [])]
            sources += self._loop_sources(function).get(node.id, [])
        for source in sources:
            handle = self._handle_source(source, call, depth + 1, function)
            if handle is not None:
                return handle
        return None

    def _helper_of(self, node: ast.Call, call: CallSite) -> Function | None:
        """The function `self.helper(...)` or a module-level `helper(...)` calls."""
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id == "self" and call.cls is not None:
            info = self.tree.classes.get(f"{call.module}.{call.cls.split('.')[0]}")
            found = self.resolver.find_method(info, func.attr) if info is not None else None
            return found[0] if found is not None else None
        if isinstance(func, ast.Name):
            module = self.tree.modules.get(call.module)
            if module is not None and func.id in module.functions:
                return module.functions[func.id]
        return None

    def _created(self, node: ast.Call, call: CallSite) -> str | None:
        """The FQN of the actor class `Cls.options(...).remote(...)` starts, when the tree
        (or a `--path` package) defines it: a worker, an environment, a collector."""
        fake = CallSite(node, call.module, call.file, call.line, call.cls, call.function)
        created = self._actor_class(fake)
        return created.fqn if created is not None else None

    def _self_attribute_actor(self, call: CallSite, attribute: str) -> str | None:
        """The worker class whose actors `self.<attribute> = ...` holds, in the caller's
        class (a list of `Cls.options(...).remote()`, say), when exactly one."""
        top = _top_class(call)
        info = self.tree.classes.get(f"{call.module}.{top}") if top else None
        if info is None:
            return None
        key = (info.fqn, attribute)
        if key not in self._attribute_actors:
            found: set[str] = set()
            for node in ast.walk(info.node):
                targets = node.targets if isinstance(node, ast.Assign) else (
                    [node.target] if isinstance(node, ast.AnnAssign) else [])
                if not any(
                        isinstance(t, ast.Attribute) and t.attr == attribute and
                        isinstance(t.value, ast.Name) and t.value.id == "self" for t in targets):
                    continue
                value = getattr(node, "value", None)
                for inner in ast.walk(value) if isinstance(value, ast.expr) else ():
                    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                            and inner.func.attr == "remote":
                        created = self._created(inner, call)
                        if created is not None:
                            found.add(created)
            self._attribute_actors[key] = found.pop() if len(found) == 1 else None
        return self._attribute_actors[key]

    def _loop_sources(self, function: Function) -> dict[str, list[ast.expr]]:
        """Loop variable -> what it iterates (`for w in ...`, comprehensions), per function."""
        key = (function.module, function.qualname)
        if key not in self._loops:
            found: dict[str, list[ast.expr]] = {}
            for inner in ast.walk(function.node):
                if isinstance(inner, (ast.For, ast.AsyncFor, ast.comprehension)) and \
                        isinstance(inner.target, ast.Name):
                    found.setdefault(inner.target.id, []).append(inner.iter)
            self._loops[key] = found
        return self._loops[key]

    # -- one dispatch call

    def _dispatch(self, call: CallSite, helper_name: str) -> None:
        helper = DISPATCH_HELPERS[helper_name]
        self.side.sites += 1
        function = self.tree.function_of(call)
        driver_name = _top_class(call) or call.module
        where_fn = call.function or "<module>"
        receiver = _receiver(call)
        group = self._group_expr(receiver, function) if receiver is not None else None
        owner = self._owner(call, group or "")
        if owner is None:
            self._unresolved(call, helper_name, f"whose workers {group} holds is not known")
            return
        self._driver(call)
        name_expr = self._name_argument(call, helper)
        if name_expr is None:
            self._unresolved(call, helper_name, "no method name is given")
            return
        keywords, open_keywords = self._keywords(call, helper, function)
        stream = self._stream(call, function, helper.returns)
        for name, cond, where, extra, extra_open in self._names(call, name_expr, function):
            self._site(name, call, helper_name, owner.driver, None)
            self._emit(Dispatch(
                driver_name, where_fn, owner.driver, name, cond | frozenset(owner.holds),
                frozenset(keywords | extra), open_keywords or extra_open, 0, stream,
                where or call.where, helper_name, call.where if where else None,
            ))
        if not self._names(call, name_expr, function):
            self._unresolved(call, helper_name,
                             f"the method name {_text(name_expr)!r} is not a literal here or "
                             "at any caller")

    def _site(self, method: str, call: CallSite, helper: str, owner: str,
              worker: str | None) -> None:
        key = (method, id(call.node), helper, owner, worker)
        if key not in self._sites_seen:  # a set: a method of 20k call sites stays linear
            self._sites_seen.add(key)
            self.side.sites_of.setdefault(method, []).append((call, helper, owner, worker))

    def sent(self, method: str, param: str, position: int | None,
             worker: str) -> set[str] | None:
        """The strings the tree's calls of `method` on workers of class `worker` (or a
        subclass) send as its parameter `param` (`position`: its index among the
        arguments a caller gives, if it can be given positionally), from literals at the
        call or at the callers of the function that makes it; empty when no call sends
        one, None when some call sends a value that cannot be told."""
        out: set[str] = set()
        for call, helper_name, owner, held in self.side.sites_of.get(method, []):
            if not self._reaches(owner, held, worker):
                continue
            function = self.tree.function_of(call)
            cls = self.tree.classes.get(f"{call.module}.{call.cls}") if call.cls else None
            expressions = self._sent_expressions(call, helper_name, param, position)
            if expressions is None:
                return None
            for expr in expressions:
                found = self.values.strings(expr, function, cls)
                if found is not None:
                    out |= {value for value, _, _ in found}
                    continue
                if not (isinstance(expr, ast.Name) and function is not None):
                    return None
                given = {value for value, *_ in self._from_callers(function, expr.id, cls, 0)}
                if not given:
                    return None
                out |= given
        return out

    def _reaches(self, owner: str, held: str | None, worker: str) -> bool:
        """Whether a call on `owner`'s workers (of class `held`, when the handle names
        one) can land on a `worker`: some class it may start has `worker` in its MRO."""
        started = [held] if held is not None else [c.fqn for c in self.choices_of(owner)[1]]
        for fqn in started:
            info = resolve_fqn(self.tree, fqn)
            if info is not None and any(c.fqn == worker for c in self.resolver.mro(info).classes):
                return True
        return False

    def _sent_expressions(self, call: CallSite, helper_name: str, param: str,
                          position: int | None) -> list[ast.expr] | None:
        """What one call gives a worker method's parameter: for a helper that sends each
        worker its own value (a list per keyword), the list's items; [] when the call
        leaves it to its default, None when that cannot be told."""
        node = call.node
        helper = DISPATCH_HELPERS.get(helper_name)
        if helper is None:  # a direct `.remote(...)`
            args = node.args
            given = call.keyword(param)
        else:
            if not helper.sends_keywords or param in helper.own_keywords:
                return []
            first = (helper.name_position if helper.name_position is not None else -1) + 1
            args = node.args[first:]
            given = call.keyword(param)
            if given is None and helper.common_keyword is not None:
                common = call.keyword(helper.common_keyword)
                if isinstance(common, ast.Dict):
                    given = next((v for k, v in zip(common.keys, common.values, strict=True)
                                  if isinstance(k, ast.Constant) and k.value == param), None)
                    if given is not None:
                        return [given]
            if given is not None and helper.common_keyword is not None:
                # The helper's other keywords carry one value per worker.
                if isinstance(given, (ast.List, ast.Tuple)):
                    return list(given.elts)
                if isinstance(given, (ast.ListComp, ast.GeneratorExp)):
                    return [given.elt]
                return [given]
        if given is None and position is not None:
            if any(isinstance(a, ast.Starred) for a in args[: position + 1]):
                return None
            given = args[position] if position < len(args) else None
        if given is None and any(k.arg is None for k in node.keywords):
            return None  # perhaps in a `**mapping`
        return [] if given is None else [given]

    def _unresolved(self, call: CallSite, helper: str, reason: str) -> None:
        self.side.unresolved.append(Unresolved(
            _top_class(call) or call.module, call.function or "<module>", call.where, helper,
            reason))

    def _emit(self, dispatch: Dispatch) -> None:
        if not contradictory(dispatch.condition):
            self.side.dispatches.append(dispatch)

    def _name_argument(self, call: CallSite, helper: DispatchHelper) -> ast.expr | None:
        if helper.name_position is not None and len(call.node.args) > helper.name_position:
            arg = call.node.args[helper.name_position]
            return None if isinstance(arg, ast.Starred) else arg
        return call.keyword(helper.name_keyword)

    def _keywords(self, call: CallSite, helper: DispatchHelper,
                  function: Function | None) -> tuple[set[str], bool]:
        """Keywords sent to the worker, and whether some come from an unknown mapping.
        A `**kwargs` of the enclosing function is filled in per caller by `_names`."""
        if not helper.sends_keywords:
            return set(), False
        sent: set[str] = set()
        open_keywords = False
        forwarded = _var_keyword(function)
        for keyword in call.node.keywords:
            if keyword.arg is None:
                if not (isinstance(keyword.value, ast.Name) and keyword.value.id == forwarded):
                    open_keywords = True
            elif keyword.arg == helper.common_keyword:
                keys, unknown = self._dict_keys(keyword.value, function, forwarded)
                sent |= keys
                open_keywords = open_keywords or unknown
            elif keyword.arg not in helper.own_keywords and keyword.arg != helper.name_keyword:
                sent.add(keyword.arg)
        return sent, open_keywords

    def _dict_keys(self, node: ast.expr, function: Function | None,
                   forwarded: str | None, depth: int = 0) -> tuple[set[str], bool]:
        if isinstance(node, ast.Constant) and node.value is None:
            return set(), False
        if isinstance(node, ast.Name) and function is not None and depth < MAX_DEPTH:
            assigned = function.assignments.get(node.id, [])
            if len(assigned) == 1:
                return self._dict_keys(assigned[0].value, function, forwarded, depth + 1)
            return set(), True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "dict" and not node.args:
            return {k.arg for k in node.keywords if k.arg}, any(
                k.arg is None for k in node.keywords)
        if not isinstance(node, ast.Dict):
            return set(), True
        keys: set[str] = set()
        unknown = False
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # `**mapping`
                if not (isinstance(value, ast.Name) and value.id == forwarded):
                    unknown = True
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                keys.add(key.value)
            else:
                unknown = True
        return keys, unknown

    def _names(
        self, call: CallSite, name_expr: ast.expr, function: Function | None
    ) -> list[tuple[str, Condition, str | None, set[str], bool]]:
        """(method, condition, where, keywords added by the caller, open) per name."""
        cls = self.tree.classes.get(f"{call.module}.{call.cls}") if call.cls else None
        base = condition_of(call.guards, function)
        direct = self.values.strings(name_expr, function, cls)
        if direct is not None:
            return [(v, c | base, w, set(), False) for v, c, w in direct]
        if not (isinstance(name_expr, ast.Name) and function is not None):
            return []
        return [(v, c | base, w, k, o)
                for v, c, w, k, o in self._from_callers(function, name_expr.id, cls, 0)]

    def _from_callers(
        self, function: Function, param: str, cls: ClassInfo | None, depth: int
    ) -> Iterator[tuple[str, Condition, str, set[str], bool]]:
        """The literal each caller of `function` passes for its parameter `param`."""
        params = function.bound_params()
        names = [p.name for p in params]
        if param not in names or depth > MAX_DEPTH or function.assignments.get(param):
            return
        index = names.index(param)
        positional = params[index].kind in ("positional-only", "positional")
        var_keyword = _var_keyword(function)
        for caller in self._calls_by_name.get(function.name, []):
            if not self._may_call(caller, function, cls):
                continue
            given: ast.expr | None = None
            if positional and index < len(caller.node.args):
                given = caller.node.args[index]
            given = given if given is not None else caller.keyword(param)
            if given is None or isinstance(given, ast.Starred):
                continue
            caller_fn = self.tree.function_of(caller)
            caller_cls = self.tree.classes.get(f"{caller.module}.{caller.cls}") \
                if caller.cls else None
            extra: set[str] = set()
            extra_open = False
            if var_keyword is not None:
                for keyword in caller.node.keywords:
                    if keyword.arg is None:
                        extra_open = True
                    elif keyword.arg not in names:
                        extra.add(keyword.arg)
            base = condition_of(caller.guards, caller_fn)
            found = self.values.strings(given, caller_fn, caller_cls)
            if found is not None:
                for value, cond, where in found:
                    yield value, cond | base, where or caller.where, extra, extra_open
            elif isinstance(given, ast.Name) and caller_fn is not None:
                for value, cond, where, more, more_open in self._from_callers(
                        caller_fn, given.id, caller_cls, depth + 1):
                    yield value, cond | base, where, extra | more, extra_open or more_open

    def _may_call(self, caller: CallSite, function: Function, cls: ClassInfo | None) -> bool:
        """Whether `caller` (a call of something named like `function`) calls it."""
        func = caller.node.func
        if isinstance(func, ast.Name):
            return cls is None and caller.module == function.module
        if cls is None or not isinstance(func, ast.Attribute):
            return False
        if self._group_expr(func.value, self.tree.function_of(caller)) is not None:
            return False  # a call on a worker group is a dispatch of its own
        if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            if caller.cls is None:
                return False
            mine = self.tree.classes.get(f"{caller.module}.{caller.cls.split('.')[0]}")
            return mine is not None and cls in self.resolver.mro(mine).classes
        return True

    def _stream(self, call: CallSite, function: Function | None, returns: str) -> bool | None:
        """Whether the caller reads the call's result as a stream: iterating one
        ObjectRef is reading a stream; iterating a list of them is not."""
        func = call.node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
            options = func.value
            if any(k.arg == STREAMING_OPTION[0] and isinstance(k.value, ast.Constant)
                   and k.value.value == STREAMING_OPTION[1] for k in options.keywords):
                return True
        assigned = call.assigned_to
        iterated = call.iterated or (
            assigned is not None and function is not None and assigned in function.iterated)
        if returns == "ref" and iterated:
            return True
        if function is None:
            return None
        readers = self._readers_in.get((call.module, call.function), {})
        mine = [*readers.get(("node", id(call.node)), []),
                *(readers.get(("name", call.assigned_to), []) if call.assigned_to else [])]
        for _, other in sorted(mine, key=lambda found: found[0]):  # the first in source order
            if other.callee == "ray.get":
                return False if returns != "bundle" else None
            if other.callee.endswith(_RESULTS_READER):
                proxy = other.keyword(STREAM_PROXY_KEYWORD)
                return isinstance(proxy, ast.Constant) and proxy.value is True
        return None

    # -- direct handle calls

    def _direct_by_name(self, call: CallSite, name_expr: ast.expr, handle: str) -> None:
        """`getattr(handle, NAME).remote(...)`: one direct call per name NAME can be."""
        function = self.tree.function_of(call)
        cls = self.tree.classes.get(f"{call.module}.{call.cls}") if call.cls else None
        names = self.values.strings(name_expr, function, cls)
        if not names:
            self.side.sites += 1
            self._unresolved(call, "remote", f"the method name {_text(name_expr)!r} is not a "
                             "literal here")
            return
        for index, (method, condition, _) in enumerate(names):
            self._direct(call, method, handle, extra=condition, count=index == 0)

    def _direct(self, call: CallSite, method: str, handle: str, *,
                extra: Condition = ALWAYS, count: bool = True) -> None:
        if count:
            self.side.sites += 1
        function = self.tree.function_of(call)
        me = _top_class(call)
        driver_name = me or call.module
        parts = handle.split(".")
        owner: Owner | None
        worker: str | None = None
        if handle.startswith(ACTOR_PREFIX):  # an actor of one known class
            worker = handle.removeprefix(ACTOR_PREFIX)
            owner = Owner(me if me is not None else worker.rsplit(".", 1)[-1])
        elif WORKER_GROUP_ATTRIBUTE in parts:
            owner = self._owner(call, ".".join(parts[: parts.index(WORKER_GROUP_ATTRIBUTE) + 1]))
        else:
            owner = Owner(me) if me is not None else None
        if owner is None:
            self._unresolved(call, "remote", f"whose workers {handle} holds is not known")
            return
        self._driver(call)
        self._site(method, call, "remote", owner.driver, worker)
        keywords = {k.arg for k in call.node.keywords if k.arg is not None}
        open_keywords = any(k.arg is None for k in call.node.keywords)
        positional = len(call.node.args)
        if any(isinstance(a, ast.Starred) for a in call.node.args):
            open_keywords = True
        self._emit(Dispatch(
            driver_name, call.function or "<module>", owner.driver, method,
            condition_of(call.guards, function) | frozenset(owner.holds) | extra,
            frozenset(keywords),
            open_keywords, positional, self._stream(call, function, "ref"), call.where, "remote",
            worker=worker,
        ))


def _remote_target(node: ast.Call) -> ast.expr | None:
    """`x` of a call `x[.options(...)].remote(...)`; None for any other call."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr != "remote":
        return None
    target = func.value
    if isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) and \
            target.func.attr == "options":
        target = target.func.value
    return target


def _var_keyword(function: Function | None) -> str | None:
    if function is None:
        return None
    return next((p.name for p in function.params if p.kind == "var-keyword"), None)


def restricted(dispatch: Dispatch, driver: Driver | None) -> Condition:
    """The dispatch's condition, on the switches the owner chooses its class by."""
    return restrict(dispatch.condition, driver.switches if driver is not None else ())
