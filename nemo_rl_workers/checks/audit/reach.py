"""Reachability of a driver-side finding, from the audit's own model of the tree.

A finding is a driver method (`Policy.score`) that fails on a worker class under the
switches that select it (`megatron_cfg.enabled=true`). Its callers in the tree (calls
`x.score(...)` anywhere: algorithms, environments, entry scripts) are followed back, with
the config guards on the way: the caller's enclosing `if`s, early exits and asserts
(`conditions`, any section's keys: a switch is matched by its keys' suffix), and the
guards where the receiver was built (`self.reward_model_policy = Policy(...)` after
`assert config["dtensor_cfg"]["enabled"]`: a guard on the config a driver was built from
holds for every call on it, in whatever function the call is, matched by the name it is
kept under). A guard excludes the failing class when it contradicts its switches, or
when together they make a combination the driver itself refuses (`if megatron_enable
and dtensor_enable: raise` before it chooses its worker).

- `reachable`: some caller reaches the call under switches that select the class;
- `guarded`: every caller excludes them (the guard named, file:line);
- `latent`: no caller in the tree (a trap for forks and users).

A caller whose own function has callers is followed one level further (a guard there
counts too); what cannot be told stays `reachable`. With `origins` (a config-scoped
`check`), each reaching call is followed up to where it comes from, with the config tests
on the way (`interpret.conditions`), so one recipe's values can be judged against them later.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from nemo_rl_workers.interpret.conditions import ConfigTest, Origin, config_tests
from nemo_rl_workers.tree.conditions import (
    Condition,
    condition_of,
    conflicts,
    test_holds,
)
from nemo_rl_workers.tree.drivers import Dispatch, DriverSide, WorkerChoice, restricted
from nemo_rl_workers.tree.entry_configs import required_keys
from nemo_rl_workers.tree.source import CallSite, Function, Guard, SourceTree

Reach: TypeAlias = Literal["reachable", "guarded", "latent"]
MAX_LEVELS = 2
# How far a reaching call is followed up to a module that declares its config, and how
# many callers of one name are followed (a name called all over the tree says nothing).
MAX_ORIGIN_LEVELS = 3
MAX_ORIGIN_CALLERS = 12


@dataclass
class _Exclusion:
    guard: str | None = None  # file:line of the guard that excludes, None: it does not


@dataclass
class Reachability:
    tree: SourceTree
    side: DriverSide
    # Whether to follow each reaching call up to where it comes from, with the config
    # tests on the way (`Finding.callers`): what a config-scoped run needs.
    origins: bool = False
    _calls_by_name: dict[str, list[CallSite]] = field(default_factory=dict)
    _built: dict[str, list[CallSite]] = field(default_factory=dict)
    _refused: dict[str, list[Condition]] = field(default_factory=dict)
    _plain_calls: dict[tuple[str, str], list[CallSite]] = field(default_factory=dict)
    # module -> the top-level keys its entry config class requires (None: it has none)
    entry_keys: dict[str, tuple[str, ...] | None] = field(default_factory=dict)

    _indexed: int = 0
    _asked: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._index()
        for driver in self.side.drivers.values():
            self._refused[driver.name] = self._refusals(driver.fqn)

    def _callers_named(self, method: str) -> list[CallSite]:
        """Calls `x.<method>(...)`; modules read but not yet modelled that hold such a
        call are modelled first (a caller need not name the driver's class)."""
        if method not in self._asked:
            self._asked.add(method)
            needle = f".{method}("
            for name in [m for m, (_, text) in self.tree.pending.items() if needle in text]:
                self.tree.module(name)
            self._index()
        return self._calls_by_name.get(method, [])

    def _index(self) -> None:
        drivers = {d.name for d in self.side.drivers.values()}
        calls = self.tree.calls[self._indexed:]
        self._indexed = len(self.tree.calls)
        for call in calls:
            func = call.node.func
            if isinstance(func, ast.Attribute):
                self._calls_by_name.setdefault(func.attr, []).append(call)
                continue
            if isinstance(func, ast.Name):  # `helper(...)` in its own module
                self._plain_calls.setdefault((call.module, func.id), []).append(call)
            if isinstance(func, ast.Name) and func.id in drivers:
                # `name = Driver(...)` / `self.name = Driver(...)`: where drivers are built.
                kept = _kept_under(call, self.tree.function_of(call))
                if kept is not None:
                    self._built.setdefault(kept, []).append(call)

    def _refusals(self, fqn: str) -> list[Condition]:
        """Switch combinations the driver refuses before choosing (`if a and b: raise`)."""
        info = self.tree.classes.get(fqn)
        out: list[Condition] = []
        if info is None:
            return out
        init = info.methods.get("__init__")
        if init is None:
            return out
        for node in ast.walk(init.node):
            if isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp) and \
                    isinstance(node.test.op, ast.And) and node.body and \
                    isinstance(node.body[-1], ast.Raise):
                both: set[tuple[str, bool]] = set()
                for value in node.test.values:
                    both |= test_holds(value, True, init)
                if len(both) >= 2:
                    out.append(frozenset(both))
        return out

    def classify(self, dispatch: Dispatch, choice: WorkerChoice,
                 owner_switches: set[str]) -> tuple[Reach, str, tuple[Origin, ...]]:
        """The finding's class, the guard (file:line) for a guarded one, and for a
        reachable one where the reaching calls come from (see `_origins`)."""
        failing = restricted(dispatch, None) | choice.condition
        failing = frozenset(p for p in failing if p[0] in owner_switches) | choice.condition
        parts = dispatch.function.split(".")
        if len(parts) < 2 or parts[0] not in {d.name for d in self.side.drivers.values()}:
            # made outside a driver class: in the caller itself
            return "reachable", "", (Origin(dispatch.via or dispatch.call, ()),)
        refused = self._refused.get(dispatch.owner, []) + self._refused.get(parts[0], [])
        method = parts[1]
        named = self._callers_named(method)
        callers = [c for c in named if not _on_self(c) or _top(c) != parts[0]]
        via_self = [c for c in named if _on_self(c) and _top(c) == parts[0]]
        for call in via_self:  # the driver's own methods calling it: their callers count
            function = self.tree.function_of(call)
            if function is not None and "." in function.qualname:
                outer = function.qualname.split(".")[1]
                if outer != method:
                    callers.extend(c for c in self._callers_named(outer)
                                   if not _on_self(c) or _top(c) != parts[0])
        if not callers:
            return "latent", "", ()
        guards: list[str] = []
        reaching: list[CallSite] = []
        for call in callers:
            excluded = self._excluded(call, failing, refused, 0)
            if excluded.guard is None:
                reaching.append(call)
                if not self.origins:
                    break
            else:
                guards.append(excluded.guard)
        if reaching and not self.origins:
            return "reachable", "", ()
        if reaching:
            origins: dict[str, Origin] = {}
            for call in reaching:
                for origin in self._origins(call, 0, ()):
                    known = origins.get(origin.where)
                    # Reached along several paths: only the tests they share hold.
                    origins[origin.where] = origin if known is None else Origin(
                        origin.where, tuple(t for t in known.tests if t in origin.tests))
            return "reachable", "", tuple(origins[w] for w in sorted(origins))
        return "guarded", sorted(set(guards))[0], ()

    def _origins(self, call: CallSite, level: int,
                 tests: tuple[ConfigTest, ...]) -> list[Origin]:
        """Where a reaching call is made from, followed up its function's callers (by
        name) to a module whose entry functions declare the config they run on
        (`entry_configs`), with the config tests on the way: what a config-scoped run
        asks about."""
        function = self.tree.function_of(call)
        tests = (*tests, *config_tests(call.guards, function, call.file))
        if self.runs_on(call.module) is not None or level >= MAX_ORIGIN_LEVELS \
                or function is None:
            return [Origin(call.where, tests)]
        outer = [c for c in self._callers_named(function.name) if c.node is not call.node]
        outer += self._plain_calls.get((function.module, function.name), [])
        if not outer or len(outer) > MAX_ORIGIN_CALLERS:
            return [Origin(call.where, tests)]
        found: list[Origin] = []
        for caller in outer:
            found.extend(self._origins(caller, level + 1, tests))
        return found

    def runs_on(self, module: str) -> tuple[str, ...] | None:
        if module not in self.entry_keys:
            self.entry_keys[module] = required_keys(self.tree, module)
        return self.entry_keys[module]

    def _excluded(self, call: CallSite, failing: Condition, refused: list[Condition],
                  level: int) -> _Exclusion:
        function = self.tree.function_of(call)
        guard = _excluding(call.guards, function, failing, refused)
        if guard is not None:
            return _Exclusion(f"{call.file}:{guard}")
        built = self._built.get(_receiver_name(call) or "", [])
        # Built in the caller's own module, when it is (the name is local to it), else
        # anywhere in the tree under that name.
        built = [b for b in built if b.module == call.module] or built
        if built and all(_excluding(b.guards, self.tree.function_of(b), failing, refused)
                         is not None for b in built):
            first = built[0]
            line = _excluding(first.guards, self.tree.function_of(first), failing, refused)
            return _Exclusion(f"{first.file}:{line}")
        if function is None or level + 1 >= MAX_LEVELS:
            return _Exclusion()
        outer = list(self._callers_named(function.name))
        outer += self._plain_calls.get((function.module, function.name), [])
        if not outer:
            return _Exclusion()
        found: list[str] = []
        for caller in outer:
            excluded = self._excluded(caller, failing, refused, level + 1)
            if excluded.guard is None:
                return _Exclusion()
            found.append(excluded.guard)
        return _Exclusion(sorted(found)[0])


def _excluding(guards: tuple[Guard, ...], function: Function | None, failing: Condition,
               refused: list[Condition]) -> int | None:
    """The line of the first guard that, with the others, excludes `failing`."""
    condition = condition_of(guards, function)
    if not conflicts(condition, failing) and not any(
            r <= (condition | failing) for r in refused):
        return None
    for guard in guards:  # the guard to name: the first whose switches do it
        alone = condition_of((guard,), function)
        if conflicts(alone, failing) or any(r <= (alone | failing) for r in refused):
            return guard.test.lineno
    return guards[-1].test.lineno if guards else None


def _on_self(call: CallSite) -> bool:
    func = call.node.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
        func.value.id == "self"


def _top(call: CallSite) -> str | None:
    return call.cls.split(".")[0] if call.cls else None


def _receiver_name(call: CallSite) -> str | None:
    """The name a receiver is kept under: `x` for `x.m()`, `attr` for `self.attr.m()`."""
    func = call.node.func
    if not isinstance(func, ast.Attribute):
        return None
    value = func.value
    if isinstance(value, ast.Name):
        return value.id
    if isinstance(value, ast.Attribute):
        return value.attr
    return None


def _kept_under(call: CallSite, function: Function | None) -> str | None:
    """`x` / `attr` for a construction assigned to `x = ...` / `self.attr = ...`."""
    if call.assigned_to is not None:
        return call.assigned_to
    for node in ast.walk(function.node) if function is not None else ():
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is call.node:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Attribute):
                return targets[0].attr
    return None
