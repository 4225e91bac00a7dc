"""Building the revision model of a tree from its source, in one read.

The one-pass source model (`source`) and the driver reader (`drivers`) read the tree's
`nemo_rl` package; this module distils what every command judges against (`Revision`):
the schema generation, where `worker_extension_cls_fqn` is read, the worker table with its
switches and their defaults, the actor environments, what each driver calls, and what
could not be decided: modules that could not be read or parsed (`unread`) and worker
classes whose class cannot be modelled (`class_problems`). Nothing is imported.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path

from nemo_rl_workers.reading.guarded_file import FileRefused, read_regular
from nemo_rl_workers.tree.checkout import PACKAGE, project_pin
from nemo_rl_workers.tree.cluster_builds import cluster_builds
from nemo_rl_workers.tree.conditions import key_chain
from nemo_rl_workers.tree.delegated_drivers import delegated_drivers
from nemo_rl_workers.tree.drivers import Driver, DriverReader
from nemo_rl_workers.tree.entry_builds import entry_builds
from nemo_rl_workers.tree.entry_configs import setup_keys
from nemo_rl_workers.tree.frozen_groups import cleared_keys
from nemo_rl_workers.tree.git_head import head_commit
from nemo_rl_workers.tree.knowledge import (
    DRIVER_ROLES,
    EXTENSION_FIELD,
    GENERATION_DRIVER_SUFFIX,
    LIBRARY_PACKAGE,
    QUANT_KEY,
    SWITCHES,
    driver_side,
)
from nemo_rl_workers.tree.revision import NEW_SCHEMA, OLD_SCHEMA, Revision, TreeRow
from nemo_rl_workers.tree.source import (
    MAX_SOURCE_BYTES,
    Function,
    Resolver,
    SourceProblem,
    SourceTree,
    discover,
    read_tree,
    resolve_fqn,
)
from nemo_rl_workers.tree.source.gc_pause import collector_paused
from nemo_rl_workers.tree.source_kept import keep, let_go
from nemo_rl_workers.tree.tree_version import tree_version


def selects_through_library(root: Path) -> bool:
    """Whether the tree's own modules import the selection library (this repository's
    runtime does: its table is the library's)."""
    marker = f"{LIBRARY_PACKAGE}.".encode()
    # The source reader's walk and guarded read: no symlinked folder followed, no FIFO
    # waited on, no file read past the size a module may have.
    for path in discover(root / PACKAGE, [], boundary=root):
        try:
            if marker in read_regular(path, limit=MAX_SOURCE_BYTES, what="a module"):
                return True
        except FileRefused:
            continue
    return False


def build_revision(root: Path, how: str, name: str | None = None) -> Revision:
    """The model of the tree at `root` (the folder holding its `nemo_rl`); `name`: how
    reports name it (default: the folder)."""
    with collector_paused():
        return _build_revision(root, how, name)


def _build_revision(root: Path, how: str, name: str | None) -> Revision:
    let_go()  # an earlier tree's model, and what was frozen with it (see source_kept)
    tree = read_tree(root, packages=[PACKAGE], eager=driver_side)
    keep(root, tree)  # the tree's own rules walk some of it next (see source_kept)
    # What could not be read or parsed while the tree was read: an unreadable file, or a
    # module the driver marker chose to parse now. Either may hold a driver.
    unread = tuple(_shown(problem, root) for problem in tree.problems)
    resolver = Resolver(tree)
    reader = DriverReader(tree, resolver)
    side = reader.read()
    builds: dict[str, str] = {}
    for delegation in delegated_drivers(reader):
        side.drivers[delegation.driver.fqn] = delegation.driver
        builds[delegation.driver.name] = ", ".join(
            f"{name} ({_relative_line(where, root)})" for name, where in delegation.through)
    pin, project_problem = project_pin(root)
    undecided: list[str] = []
    rows: list[TreeRow] = []
    clears = cleared_keys(tree, side.drivers.values())
    for driver in sorted(side.drivers.values(), key=lambda d: d.fqn):
        role = _role_of(driver.name)
        # A driver that clears quant_cfg on its copy starts the default class under it.
        unquantized = QUANT_KEY in clears.get(driver.name, ())
        for choice in driver.choices:
            if choice.quantized:
                continue
            rows.append(TreeRow(role, driver.name, choice.condition, choice.fqn,
                                None if unquantized else reader.overrides.get(choice.fqn),
                                choice.where))
    switches = {name for row in rows for name, _ in row.condition}
    schema, has_v2 = _schema(switches)
    if schema == "undecided":
        undecided.append("the schema generation: no policy driver reads dtensor_cfg or "
                         "automodel_cfg to choose its worker")
    calls: dict[str, list[str]] = {}
    for dispatch in side.dispatches:
        calls.setdefault(dispatch.owner, []).append(dispatch.method)
    driver_modules = {d.fqn.rpartition(".")[0] for d in side.drivers.values()}
    return Revision(
        name=name or str(root), root=str(root), how=how, commit=head_commit(root),
        version=tree_version(root), schema=schema,
        has_v2=has_v2, extension_field=_extension_field(tree, driver_modules),
        rows=tuple(rows), environments={k: _env_name(v) for k, v in side.environments.items()},
        defaults=_defaults(tree, driver_modules, switches), vllm_pin=pin,
        project_problem=project_problem,
        calls={k: tuple(sorted(set(v))) for k, v in sorted(calls.items())},
        drivers={d.name: _role_of(d.name) for d in side.drivers.values()},
        driver_fqns={d.name: d.fqn for d in side.drivers.values()},
        extension_params=_extension_params(tree, resolver, side.drivers.values(), root),
        builds=builds,
        setups=setup_keys(tree),
        entry_builds=tuple(dataclasses.replace(
            b, where=_relative_line(b.where, root),
            via=None if b.via is None else _relative_line(b.via, root))
            for b in entry_builds(tree, (d.name for d in side.drivers.values()))),
        cluster_builds=tuple(dataclasses.replace(b, where=_relative_line(b.where, root))
                             for b in cluster_builds(tree)),
        py_executables={k: _env_name(env) for k, (env, _) in sorted(side.py_executables.items())},
        clears=clears,
        undecided=tuple(undecided), unread=unread,
        registry_problems=tuple(_relative_line(p, root) for p in side.registry_problems),
        class_problems=_class_problems(tree, resolver, rows, root))


def _env_name(text: str) -> str:
    """An environment as the registry names it: a string literal's value, else the
    expression as written (`PY_EXECUTABLES.VLLM`)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else text


def _role_of(driver: str) -> str:
    if driver in DRIVER_ROLES:
        return DRIVER_ROLES[driver]
    return "generation" if driver.endswith(GENERATION_DRIVER_SUFFIX) else driver


def _schema(switches: set[str]) -> tuple[str, bool]:
    new = any(s.startswith(f"{NEW_SCHEMA}.") for s in switches)
    old = any(s.startswith(f"{OLD_SCHEMA}.") for s in switches)
    if new == old:
        return "undecided", False
    schema = NEW_SCHEMA if new else OLD_SCHEMA
    return schema, f"{schema}._v2" in switches


def _functions(tree: SourceTree, modules: set[str]) -> list[Function]:
    return [f for (module, _), f in tree.functions.items() if module in modules]


def _extension_field(tree: SourceTree, modules: set[str]) -> str:
    """Whether the drivers read `worker_extension_cls_fqn` from the config (a subscript
    or `.get` key) or take it as a constructor argument (a parameter), or both."""
    from_config = from_constructor = False
    for function in _functions(tree, modules):
        if any(p.name == EXTENSION_FIELD for p in function.params):
            from_constructor = True
        for node in ast.walk(function.node):
            if isinstance(node, ast.Subscript | ast.Call) and key_chain(node)[-1:] == [
                    EXTENSION_FIELD]:
                from_config = True
    if from_config and from_constructor:
        return "config and constructor"
    return "config" if from_config else "constructor" if from_constructor else "not read"


def _extension_params(tree: SourceTree, resolver: Resolver, drivers: Iterable[Driver],
                      root: Path) -> dict[str, str]:
    """Driver -> where its constructor (its own or inherited) takes a parameter named
    `worker_extension_cls_fqn` (file:line)."""
    found: dict[str, str] = {}
    for driver in sorted(drivers, key=lambda d: d.name):
        info = resolve_fqn(tree, driver.fqn)
        init = resolver.find_method(info, "__init__") if info is not None else None
        if init is None:
            continue
        args = init[0].node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.arg == EXTENSION_FIELD:
                found[driver.name] = f"{_relative(init[0].file, root)}:{arg.lineno}"
    return found


def _defaults(tree: SourceTree, modules: set[str], switches: set[str]) -> dict[str, bool]:
    """Each switch's value where the config leaves it out, as the drivers read it:
    the literal default of a `.get(key, default)` whose key chain ends with the switch's
    keys. A switch read only by subscript has none (the key is required)."""
    found: dict[str, bool] = {}
    for function in _functions(tree, modules):
        for node in ast.walk(function.node):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get" and len(node.args) == 2
                    and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, bool)):
                continue
            keys = tuple(key_chain(node))
            for name in switches:
                wanted = SWITCHES[name].keys if name in SWITCHES else ()
                if wanted and keys[-len(wanted):] == wanted:
                    found.setdefault(name, node.args[1].value)
    return found


def _shown(problem: SourceProblem, root: Path) -> str:
    """A problem as a line names it: its file from the tree's root."""
    return str(SourceProblem(_relative(problem.file, root), problem.message, problem.line))


def _relative(file: str, root: Path) -> str:
    try:
        return os.path.relpath(file, root)
    except ValueError:
        return file


def _relative_line(line: str, root: Path) -> str:
    """A "file:line: why" line with its file from the tree's root."""
    file, sep, rest = line.partition(":")
    return f"{_relative(file, root)}{sep}{rest}"


def _class_problems(tree: SourceTree, resolver: Resolver, rows: list[TreeRow],
                    root: Path) -> dict[str, str]:
    """Why a class the table names cannot be modelled: its module does not parse (it is
    modelled only now, when asked for), or its MRO has a cycle or cannot be linearized."""
    found: dict[str, str] = {}
    for fqn in sorted({f for row in rows for f in (row.default_fqn, row.quantized_fqn) if f}):
        known = len(tree.problems)
        info = resolve_fqn(tree, fqn)
        if info is None:
            new = tree.problems[known:]
            if new:
                found[fqn] = _shown(new[0], root)
            continue
        problem = resolver.mro(info).problem
        if problem is not None:
            found[fqn] = f"{_relative(info.file, root)}:{info.line}: {problem}"
    return found
