"""The worker class a user's driver script hands the tree's drivers, read from its source.

In a NeMo-RL that takes an extension only in code (v0.7.0 and older: the config's
`worker_extension_cls_fqn` is not read), the class a section's workers run is chosen in the
user's own driver: `Policy(..., worker_extension_cls_fqn="pkg.mod.Class")`, as upstream's
research template (`single_update.py`) does. `check --entry DRIVER CONFIG` follows it here:

- every call of a driver class of the revision (as the script imports it: `Policy`,
  `lm_policy.Policy`) with the keyword `worker_extension_cls_fqn=EXPR`. EXPR is a string,
  a module constant, or a read of the config (`config["policy"]["..."]`,
  `config.policy["..."]`, `policy_config.get("...")` after `policy_config = config.policy`),
  evaluated with the tree rules' evaluator (`interpret.expressions`), the function's
  config parameter (annotated with an entry config class of the tree, or named `config` /
  `master_config`) bound to the loaded config, and the statements before the call walked
  in order: assignments bind names, a key the script writes is written, a config block
  handed to a call that may change it (or a name assigned under a branch or a loop) is no
  longer known. The section the call builds is what its `config=` reads.
- a tree function that picks a driver's worker class, replaced by the script at module
  level (`lm_policy.resolve_policy_worker_cls = mine`): the class is the one FQN the
  replacement returns where every `return` is that string, else undecided.
- classes the script registers itself (`ACTOR_ENVIRONMENT_REGISTRY["pkg.Cls"] = ENV`).

What cannot be evaluated is *undecided*, with the line: never a guess, never a pass. The
script is read through the guarded reader (a regular file, bounded, decoded as Python
decodes it) and parsed, never imported; one that cannot be is `UnusableDriver` (one line).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nemo_rl_workers.errors import show
from nemo_rl_workers.interpret.expressions import (
    Environ,
    Evaluator,
    Known,
    Scope,
    Unknown,
    Value,
)
from nemo_rl_workers.reading.plain_data import plain_copy
from nemo_rl_workers.reading.recorded_reads import ENVIRON, FILE, kind_of
from nemo_rl_workers.tree.knowledge import ACTOR_ENVIRONMENT_REGISTRIES, EXTENSION_FIELD
from nemo_rl_workers.tree.revision import Revision
from nemo_rl_workers.tree.source.imports import function_imports, import_bindings
from nemo_rl_workers.tree.source.parse import NotPython, parse_file, parse_text
from nemo_rl_workers.tree.source.reading import SourceProblem, read_source
from nemo_rl_workers.tree.source.resolve import dotted_name, own_nodes

# A driver's config parameter, where no annotation names an entry config class.
CONFIG_NAMES = ("config", "master_config")
# Calls that only read what they are given: handing them a config block changes nothing.
READING_CALLS = frozenset({
    "print", "len", "repr", "str", "format", "isinstance", "type", "id", "bool", "int",
    "float", "sorted", "pprint", "pformat", "get", "keys", "values", "items", "copy",
    "deepcopy", "dumps", "to_yaml",
})


class UnusableDriver(ValueError):
    """The script named by `--entry` cannot be read or parsed; `str()` is one line."""


@dataclass(frozen=True)
class Passed:
    """One class the script hands a driver (or why it cannot be told)."""

    driver: str  # the driver class's name, e.g. "Policy"
    line: int  # the call's line in the script (or the replacement's)
    fqn: str | None  # the class, when decided
    given: str  # how the script gives it, in words
    config_path: str | None = None  # the config key it is read from
    section: str | None = None  # the config section the call builds, when it reads one
    undecided: str | None = None  # why the class is not known
    value: object = None  # the value given, where it is no string (a malformed FQN)
    replaces: bool = False  # given by a replaced resolver, not the constructor's keyword


@dataclass(frozen=True)
class DriverScript:
    """What `--entry` tells about the classes the launch starts."""

    file: str  # as given
    folder: str  # the folder Python puts first on the import path for it
    passed: tuple[Passed, ...] = ()
    # Class FQN -> (its environment as written, line): registered by the script itself.
    registered: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    # The modules its imports run (each imported name may be a module; parents too).
    imported: frozenset[str] = frozenset()


def read_driver(path: str, config: Mapping[str, Any], revision: Revision) -> DriverScript:
    """The script at `path` against the loaded `config` and the tree `revision`."""
    module = _parse(path)
    walk = _Script(path, module, config, revision)
    imported = {".".join(parts[:cut]) for name in walk.imports.values()
                for parts in [name.split(".")] for cut in range(1, len(parts) + 1)}
    return DriverScript(path, os.path.dirname(os.path.abspath(path)),
                        tuple([*walk.passed(), *walk.replaced()]), walk.registered(),
                        frozenset(imported))


def _parse(path: str) -> ast.Module:
    text = read_source(Path(path), what="an entry script")
    if isinstance(text, SourceProblem):
        raise UnusableDriver(f"--entry {path}: {text.message}")
    parsed = parse_text(text, path)
    if isinstance(parsed, NotPython):
        raise UnusableDriver(f"--entry {path}:{parsed.line}: is not Python the interpreter "
                             f"accepts ({parsed.detail})")
    if isinstance(parsed, SourceProblem):
        raise UnusableDriver(f"--entry {path}: {parsed.message}")
    return parsed


@dataclass(frozen=True)
class _Unsure:
    """A config value the script writes with something this walk cannot compute."""

    reason: str


class _Script:
    def __init__(self, path: str, module: ast.Module, config: Mapping[str, Any],
                 revision: Revision) -> None:
        self.path = path
        self.module = module
        self.config = config
        self.revision = revision
        self.imports = _imports(module)
        self.constants = _constants(module)
        self.package = next((fqn.split(".")[0] for fqn in revision.driver_fqns.values()),
                            "nemo_rl")
        self.parents: dict[ast.AST, ast.AST] = {
            child: node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}

    # -- what names mean in the script

    def absolute(self, node: ast.expr) -> str | None:
        """The dotted name an expression refers to through the script's imports."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head not in self.imports:
            return None
        return f"{self.imports[head]}.{rest}" if rest else self.imports[head]

    def driver_of(self, func: ast.expr) -> str | None:
        """The driver class a call's callee names: its FQN as the revision has it, or a
        re-export of the same class name from the tree's package."""
        named = self.absolute(func)
        if named is None:
            return None
        for name, fqn in self.revision.driver_fqns.items():
            if named == fqn or (named.rpartition(".")[2] == name
                                and named.startswith(f"{self.package}.")):
                return name
        return None

    # -- the calls

    def passed(self) -> Iterator[Passed]:
        for node in ast.walk(self.module):
            if not isinstance(node, ast.Call):
                continue
            driver = self.driver_of(node.func)
            if driver is None:
                continue
            given = next((k.value for k in node.keywords if k.arg == EXTENSION_FIELD), None)
            spread = [k for k in node.keywords if k.arg is None]
            if given is None and not spread:
                continue
            if given is None:
                yield Passed(driver, node.lineno, None, f"**{_text(spread[0].value)}",
                             undecided=f"the call passes **{_text(spread[0].value)}, which may "
                                       f"hold {EXTENSION_FIELD}, and this check does not "
                                       "compute it")
                continue
            yield self._passed(node, driver, given)

    def _passed(self, call: ast.Call, driver: str, given: ast.expr) -> Passed:
        evaluator, changed = self._scope_at(call)
        section, section_why = self._section(call, evaluator, changed)
        value = _settled(evaluator.value(given), changed)
        shown = _text(given)
        line = given.lineno  # the keyword's own line, in a call written over many
        if isinstance(value, Unknown):
            return Passed(driver, line, None, shown, section=section,
                          undecided=value.reason)
        config_path = value.path
        how = (f"the config's {config_path} (read as {shown})" if config_path is not None
               else shown if isinstance(given, ast.Constant)
               else f"{shown} (= {show(value.value)})")
        if section is None and section_why is not None:
            return Passed(driver, line, _as_fqn(value.value), how, config_path,
                          undecided=section_why, value=value.value)
        return Passed(driver, line, _as_fqn(value.value), how, config_path, section,
                      value=value.value)

    def _section(self, call: ast.Call, evaluator: Evaluator,
                 changed: Mapping[str, str]) -> tuple[str | None, str | None]:
        """The config section the call builds (what its `config=` reads), or why not;
        (None, None) where it gives no `config=` (the driver's only section decides)."""
        given = next((k.value for k in call.keywords if k.arg == "config"), None)
        if given is None:
            return None, None
        value = evaluator.value(given)  # which block, not what it holds: changes do not count
        if isinstance(value, Known) and value.path and isinstance(value.value, Mapping):
            return value.path, None
        why = value.reason if isinstance(value, Unknown) else "it is not a block of the config"
        return None, f"which config section config={_text(given)} is: {why}"

    def _scope_at(self, call: ast.Call) -> tuple[Evaluator, dict[str, str]]:
        """An evaluator of names as they are at the call, and the config paths the
        statements before it may have changed (path -> why)."""
        function = self._function_of(call)
        names: dict[str, Value] = {}
        config = plain_copy(dict(self.config))
        if function is not None:
            for arg in [*function.args.posonlyargs, *function.args.args,
                        *function.args.kwonlyargs]:
                if self._is_config(arg):
                    names[arg.arg] = Known(config, "")
                else:
                    names[arg.arg] = Unknown(f"it reads {arg.arg}, a parameter of "
                                             f"{function.name} that is not the config")
        scope = Scope(names=names, environ=Environ(ENVIRON), constants=self.constants,
                      imports=self.imports)
        walk = _Walk(scope, self)
        body = function.body if function is not None else self.module.body
        walk.to(body, call)
        return Evaluator(scope), walk.changed

    def _function_of(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        current = self.parents.get(node)
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return current
            current = self.parents.get(current)
        return None

    def _is_config(self, arg: ast.arg) -> bool:
        """A parameter annotated with a config class of an entry module of the tree (one
        with a `setup`), or named as drivers name the config."""
        if arg.annotation is not None:
            named = self.absolute(_unquoted(arg.annotation))
            if named is not None and named.rpartition(".")[0] in self.revision.setups:
                return True
        return arg.arg in CONFIG_NAMES

    # -- a replaced resolver

    def replaced(self) -> Iterator[Passed]:
        """Module-level replacements of a tree function a driver picks its worker with."""
        for stmt in self.module.body:
            if not isinstance(stmt, ast.Assign):
                continue
            for target in stmt.targets:
                if not isinstance(target, ast.Attribute):
                    continue
                owner = self.absolute(target.value)
                if owner is None or not owner.startswith(f"{self.package}."):
                    continue
                for driver, by_name in self._picking(owner, target.attr):
                    yield self._replacement(stmt, f"{owner}.{target.attr}", driver, by_name)

    def _picking(self, module: str, name: str) -> list[tuple[str, str | None]]:
        """The drivers whose class body calls `module.name` with one of the worker classes
        the driver starts (`name("pkg.Worker", config)`): (driver, None) where `module` is
        the driver's own, (driver, its module) where that module imported the name from
        `module` (`from module import name`)."""
        out: list[tuple[str, str | None]] = []
        for driver, fqn in self.revision.driver_fqns.items():
            own = fqn.rpartition(".")[0]
            found = (_tree_module(self.revision.root, own)
                     if self.revision.root is not None else None)
            if found is None:
                continue
            source, is_package = found
            local = name if own == module else _imported_as(source, own, is_package, module,
                                                            name)
            if local is None:
                continue
            workers = {row.default_fqn for row in self.revision.rows_of(driver)}
            cls = next((n for n in source.body if isinstance(n, ast.ClassDef)
                        and n.name == driver), None)
            if cls is not None and any(_picks(function, local, workers)
                                       for function in ast.walk(cls)
                                       if isinstance(function, ast.FunctionDef)):
                out.append((driver, None if own == module else own))
        return out

    def _replacement(self, stmt: ast.Assign, target: str, driver: str,
                     by_name: str | None) -> Passed:
        given = f"{target} = {_text(stmt.value)}"
        if by_name is not None:  # the driver's module holds the function it imported
            return Passed(driver, stmt.lineno, None, given, replaces=True, undecided=(
                f"it replaces {target}, with which {driver} picks its worker class, but "
                f"{by_name} imports that function by name, so {driver} calls the "
                f"replacement only if {by_name} is first imported after this line (what the "
                f"script imports before it may import {by_name}); replace "
                f"{by_name}.{target.rpartition('.')[2]} instead"))
        returns = self._returns(stmt.value)
        if returns is None or len(set(returns)) != 1:
            return Passed(driver, stmt.lineno, None, given, replaces=True, undecided=(
                f"it replaces {target}, with which {driver} picks its worker class, by "
                f"{_text(stmt.value)}, whose result this check does not compute (only a "
                "replacement whose every return is one class name is followed)"))
        return Passed(driver, stmt.lineno, returns[0], f"the class {given} returns",
                      value=returns[0], replaces=True)

    def _returns(self, node: ast.expr) -> list[str] | None:
        """The strings a replacement returns, where every return is one; else None."""
        body: list[ast.expr]
        if isinstance(node, ast.Lambda):
            body = [node.body]
        elif isinstance(node, ast.Name):
            function = next((n for n in self.module.body if isinstance(
                n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == node.id), None)
            if function is None:
                return None
            found = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
            if not found or any(r.value is None for r in found):
                return None
            body = [r.value for r in found if r.value is not None]
        else:
            return None
        values = [self._string(expr) for expr in body]
        return [v for v in values if v is not None] if all(
            v is not None for v in values) else None

    def _string(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and isinstance(self.constants.get(node.id), ast.Constant):
            value = self.constants[node.id]
            assert isinstance(value, ast.Constant)
            return value.value if isinstance(value.value, str) else None
        return None

    # -- registrations

    def registered(self) -> dict[str, tuple[str, int]]:
        """`REGISTRY["pkg.Cls"] = ENV` at the script's module level (under
        `if __name__ == "__main__":` too)."""
        out: dict[str, tuple[str, int]] = {}
        for stmt in _module_level(self.module.body):
            if not isinstance(stmt, ast.Assign):
                continue
            for target in stmt.targets:
                if not isinstance(target, ast.Subscript):
                    continue
                registry = self.absolute(target.value) or dotted_name(target.value) or ""
                if registry.rpartition(".")[2] not in ACTOR_ENVIRONMENT_REGISTRIES:
                    continue
                key = self._string(target.slice)
                if key is not None:
                    out[key] = (_text(stmt.value), stmt.lineno)
        return out


class _Walk:
    """The statements before a call, in order: what each name holds at the call, and
    which config paths may have changed."""

    def __init__(self, scope: Scope, script: _Script) -> None:
        self.scope = scope
        self.script = script
        self.changed: dict[str, str] = {}

    @property
    def evaluator(self) -> Evaluator:
        return Evaluator(self.scope)

    def to(self, body: Sequence[ast.stmt], call: ast.AST) -> bool:
        """Walk `body` up to the statement holding `call` (into its block); True when
        the call was reached."""
        for stmt in body:
            if _holds(stmt, call):
                for block in _blocks(stmt):
                    if any(_holds(s, call) for s in block):
                        return self.to(block, call)
                return True  # the call is in the statement's own expressions
            self._effect(stmt)
        return False

    def _effect(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            value = self.evaluator.value(stmt.value)
            for target in stmt.targets:
                self._bind(target, value, stmt)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, self.evaluator.value(stmt.value), stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.scope.names[stmt.name] = Unknown(f"it reads {stmt.name}, defined at line "
                                                  f"{stmt.lineno}")
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return
        else:  # a branch, a loop, an augmented assignment, a call: what it may change
            self._unsettle(stmt)

    def _bind(self, target: ast.expr, value: Value, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.scope.names[target.id] = value
            self._calls_in(stmt)
            return
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            base = self.evaluator.value(target.value)
            key: Value = (self.evaluator.value(target.slice) if isinstance(target, ast.Subscript)
                          else Known(target.attr))
            if isinstance(base, Known) and base.path is not None and isinstance(
                    base.value, dict) and isinstance(key, Known) and isinstance(
                        key.value, (str, int)):
                base.value[key.value] = value.value if isinstance(value, Known) else _Unsure(
                    f"line {stmt.lineno} sets it to a value this check does not compute "
                    f"({value.reason})")
                self._calls_in(stmt)
                return
        self._unsettle(stmt)

    def _unsettle(self, stmt: ast.stmt) -> None:
        """Names a statement may assign (it is not followed) become unknown; config blocks
        it hands a call that may change them are marked changed."""
        for node in own_nodes(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.scope.names[node.id] = Unknown(
                    f"it reads {node.id}, which line {getattr(node, 'lineno', stmt.lineno)} "
                    "assigns in a statement this check does not follow")
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(
                    node.ctx, (ast.Store, ast.Del)):
                self._mark(node.value, f"line {node.lineno} changes it in a statement this "
                                       "check does not follow")
        self._calls_in(stmt)

    def _calls_in(self, stmt: ast.stmt) -> None:
        for node in own_nodes(stmt):
            if not isinstance(node, ast.Call):
                continue
            name = (node.func.attr if isinstance(node.func, ast.Attribute)
                    else node.func.id if isinstance(node.func, ast.Name) else "")
            if name in READING_CALLS:
                continue
            handed = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(node.func, ast.Attribute):
                handed.append(node.func.value)  # `block.update(...)`, `block.pop(...)`
            for expr in handed:
                self._mark(expr, f"line {node.lineno} hands it to {_text(node.func)}(), "
                                 "which may change it")

    def _mark(self, expr: ast.expr, why: str) -> None:
        if isinstance(expr, ast.Starred):
            expr = expr.value
        value = self.evaluator.value(expr)
        if isinstance(value, Known) and value.path is not None and isinstance(
                value.value, Mapping):
            self.changed.setdefault(value.path, why)


def _settled(value: Value, changed: Mapping[str, str]) -> Value:
    """`value`, unknown where it was read from a config path the script may have changed
    before (or wrote with something this check does not compute)."""
    if isinstance(value, Known) and isinstance(value.value, _Unsure):
        return Unknown(value.value.reason, value.reads, value.env)
    if isinstance(value, Known):
        for path, _ in value.reads:
            for where, why in changed.items():
                if path == where or path.startswith(f"{where}.") or not where:
                    return Unknown(f"it reads {path}, and {why}", value.reads, value.env)
    return value


def _imported_as(source: ast.Module, own: str, is_package: bool, module: str,
                 name: str) -> str | None:
    """The name `own` (a module of the tree, parsed as `source`) binds `module.name` to
    with a module-level `from ... import`, or None."""
    for stmt in source.body:
        if not isinstance(stmt, ast.ImportFrom):
            continue
        for local, target in import_bindings(stmt, own, is_package).items():
            if target == f"{module}.{name}":
                return local
    return None


def _picks(function: ast.FunctionDef, name: str, workers: set[str]) -> bool:
    """Whether `function` calls `name` with one of `workers`: a literal, or a local name
    the function assigns one (`worker_cls = "pkg.Worker"; name(worker_cls, cfg)`)."""
    holding = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
               and isinstance(node.value, ast.Constant) and node.value.value in workers
               for target in node.targets if isinstance(target, ast.Name)}
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
        and any((isinstance(a, ast.Constant) and a.value in workers)
                or (isinstance(a, ast.Name) and a.id in holding) for a in node.args)
        for node in ast.walk(function))


def _as_fqn(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _holds(stmt: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(stmt))


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a compound statement holds (its branches, handlers)."""
    blocks: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list):
            blocks.append(block)
    for handler in getattr(stmt, "handlers", []):
        blocks.append(handler.body)
    for case in getattr(stmt, "cases", []):
        blocks.append(case.body)
    return blocks


def _module_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The script's top-level statements, and those under a top-level `if`/`try`."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.Try)):
            for block in _blocks(stmt):
                yield from _module_level(block)


def _imports(module: ast.Module) -> dict[str, str]:
    """Local name -> absolute dotted name, for the script's imports anywhere in it (a script
    runs as `__main__`, in no package: its relative imports bind nothing)."""
    return function_imports(module, "__main__", False)


def _constants(module: ast.Module) -> dict[str, ast.expr]:
    """Names the script binds once at module level to a literal."""
    counts: dict[str, int] = {}
    found: dict[str, ast.expr] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name):
            found[stmt.targets[0].id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                and stmt.value is not None:
            found[stmt.target.id] = stmt.value
    return {name: value for name, value in found.items() if counts.get(name) == 1}


def _tree_module(root: str, module: str) -> tuple[ast.Module, bool] | None:
    """A module of the tree, parsed, and whether it is a package's `__init__` (None where
    it cannot be read)."""
    base = Path(root, *module.split("."))
    for file in (base.with_suffix(".py"), base / "__init__.py"):
        if kind_of(file) != FILE:
            continue
        parsed = parse_file(file)
        return None if isinstance(parsed, SourceProblem) else (parsed, file.name == "__init__.py")
    return None


def _unquoted(node: ast.expr) -> ast.expr:
    """A string annotation (`"MasterConfig"`) as the expression it names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return node
    return node


def _text(node: ast.AST) -> str:
    try:
        text = " ".join(ast.unparse(node).split())
    except RecursionError:  # a hostile script's expression, nested past the limit
        return "an expression nested too deeply to show"
    return text if len(text) <= 80 else text[:77] + "..."
