"""The class judgement: is a worker group's class one Ray and upstream can start?

Judged before upstream's `RayWorkerGroup.__init__` runs, from two things only:
- the class's source, found on the driver's import path as the import system would
  (`reading.source.locate`: files only, no package `__init__` executed) and parsed with
  `ast`, nothing of it imported: the class is defined where its FQN says; it is an actor
  class (`@ray.remote`); it is not a subclass of one (Ray refuses that at class definition,
  in the worker's process);
- the live process state: the tree's own `get_actor_python_env` answers for the class
  (the live `ACTOR_ENVIRONMENT_REGISTRY`, which scripts and upstream's tests extend); a
  refusal's fix names the environment the tree's model registers for the class's base
  (`environment_fix`).

What the source cannot decide (a class made by a call other than `ray.remote(...)`, a
name imported from a module that cannot be found) passes: a refusal is only ever a
problem the guard has seen. Upstream's own classes (defined in the tree's own `nemo_rl`
package) are never refused.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.model.fqn import fqn_problem
from nemo_rl_workers.tree.knowledge import makes_actor
from nemo_rl_workers.tree.source import ImportRoots, locate, read_source
from nemo_rl_workers.tree.source.reading import SourceProblem


class Unreadable(RuntimeError):
    """The class's source is there but the guard cannot read or parse it: not a verdict
    on the class (Python may import it fine); the guard fails open."""


class WorkerContractError(ValueError):
    """A worker group's class was refused before upstream created anything for it;
    `str()` is one sentence: the class, what is wrong, where, the rule, the fix."""

    def __init__(self, fqn: str, rule: str, sentence: str) -> None:
        super().__init__(sentence)
        self.fqn = fqn
        self.rule = rule


@dataclass(frozen=True)
class Verdict:
    """Why a class cannot be started (`rule`, `what`, `fix`), or a pass (`rule` "")."""

    rule: str = ""
    what: str = ""
    fix: str = ""

    @property
    def refused(self) -> bool:
        return bool(self.rule)


PASS = Verdict()


@dataclass(frozen=True)
class _Found:
    """A top-level name of a module: a class statement, or an assignment/import."""

    file: str
    module: str  # the module that defines it (where its bases' names resolve)
    node: ast.ClassDef | None
    value: ast.expr | None = None  # `X = ray.remote(Y)` and the like
    imported: str | None = None  # `from m import X`: the absolute "m.X"


def _is_remote(expr: ast.expr) -> bool:
    """`ray.remote`, `remote`, `ray.remote(...)`, `remote(...)` as written."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    return makes_actor(ast.unparse(expr))


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    base = parts[:max(keep, 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


class SourceIndex:
    """Top-level names of modules found on an import path, each module parsed once."""

    def __init__(self, roots: ImportRoots) -> None:
        self.roots = roots
        self._modules: dict[str, tuple[str, dict[str, _Found]] | str] = {}

    def module(self, name: str) -> tuple[str, dict[str, _Found]] | str:
        """(file, names) of a module, or why it is not there; Unreadable when its file
        cannot be read or parsed."""
        if name not in self._modules:
            self._modules[name] = self._read(name)
        return self._modules[name]

    def _read(self, name: str) -> tuple[str, dict[str, _Found]] | str:
        found = locate(name, self.roots)
        if isinstance(found, str):
            return found
        text = read_source(found.file)
        if isinstance(text, SourceProblem):
            raise Unreadable(f"cannot read the source of {name}: {text}")
        try:
            tree = ast.parse(text, filename=str(found.file))
        except SyntaxError as err:
            raise Unreadable(f"cannot parse the source of {name}: {found.file}:{err.lineno}: "
                             f"{err.msg}") from err
        file = str(found.file)
        package = found.file.name == "__init__.py"
        names: dict[str, _Found] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                names[stmt.name] = _Found(file, name, stmt)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        names[target.id] = _Found(file, name, None, stmt.value)
            elif isinstance(stmt, ast.ImportFrom):
                source = _absolute(name, package, stmt)
                for alias in stmt.names:
                    names[alias.asname or alias.name] = _Found(
                        file, name, None, imported=f"{source}.{alias.name}")
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                names[stmt.name] = _Found(file, name, None, ast.Constant(None))
            elif isinstance(stmt, ast.Try | ast.If):
                # Names defined under `try`/`if` at module level: known to exist, not how.
                for inner in ast.walk(stmt):
                    if isinstance(inner, ast.ClassDef):
                        names.setdefault(inner.name, _Found(file, name, inner))
        return file, names

    def lookup(self, fqn: str, depth: int = 0) -> _Found | str:
        """What `module.Name` is, following `from m import Name` a few steps; or why
        the module or the name is not there."""
        module, _, name = fqn.rpartition(".")
        read = self.module(module)
        if isinstance(read, str):
            return read
        file, names = read
        found = names.get(name)
        if found is None:
            return f"{file} defines no {name}"
        if found.imported is not None and depth < 5:
            target = self.lookup(found.imported, depth + 1)
            return found if isinstance(target, str) else target
        return found


def _where(found: _Found) -> str:
    line = found.node.lineno if found.node is not None else 0
    return f"{found.file}:{line}" if line else found.file


def _actor_bases(index: SourceIndex, module: str, node: ast.ClassDef) -> str | None:
    """The first base of the class that is itself an actor class, as "Name (file:line)"."""
    read = index.module(module)
    if isinstance(read, str):
        return None
    _, names = read
    for base in node.bases:
        if isinstance(base, ast.Name):
            target: _Found | str | None = names.get(base.id)
            if isinstance(target, _Found) and target.imported is not None:
                target = index.lookup(target.imported)
        elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            local = names.get(base.value.id)
            target = (index.lookup(f"{local.imported}.{base.attr}")
                      if local is not None and local.imported is not None else None)
        else:
            target = None
        if isinstance(target, _Found) and target.node is not None \
                and any(_is_remote(d) for d in target.node.decorator_list):
            return f"{ast.unparse(base)} ({_where(target)})"
    return None


def _closest_classes(fqn: str, index: SourceIndex, own_root: str | None) -> str:
    """'did you mean X?' from the classes of the tree and of the user's folders on the
    import path ('' for none); on the refusal's path only, and never a reason to fail."""
    from nemo_rl_workers.model.suggest import did_you_mean
    from nemo_rl_workers.tree.class_names import class_suggestions, user_roots

    try:
        first = [os.path.dirname(own_root)] if own_root is not None else []  # the tree
        return did_you_mean(class_suggestions(fqn, user_roots(index.roots, first)))
    except Exception:  # noqa: BLE001 - a hint only: the refusal stands without it
        return ""


def judge_source(fqn: str, index: SourceIndex, own_root: str | None) -> Verdict:
    """The source half: defined, an actor class, not a subclass of one."""
    bad = fqn_problem(fqn, "ray_actor_class_fqn")
    if bad is not None:
        return Verdict("fqn", f"is not {bad.expected} ({bad.message})",
                       "give RayWorkerBuilder the class's full dotted name")
    module, _, name = fqn.rpartition(".")
    found = index.lookup(fqn)
    if isinstance(found, str):
        guess = _closest_classes(fqn, index, own_root)
        return Verdict(
            "defined", f"is not defined where its FQN says: {found}",
            (f"{guess} Otherwise " if guess else "")
            + f"define class {name} in module {module}, or give the FQN of the module that "
            "defines it (the workers import it from there)")
    if is_own(found.file, own_root):
        return PASS  # upstream's own classes are never refused
    if found.node is None:
        value = found.value
        if isinstance(value, ast.Constant):
            return Verdict("actor-class", f"is not a class ({found.file} defines {name} "
                           "as a function)", "name an @ray.remote class")
        if value is not None and isinstance(value, ast.Call) and _is_remote(value):
            return PASS  # `X = ray.remote(Y)`: an actor class made by a call
        return PASS  # made some other way: undecided from source, never refused
    # First: Ray refuses the definition itself, decorated or not.
    base = _actor_bases(index, found.module, found.node)
    if base is not None:
        return Verdict(
            "actor-subclass", f"subclasses the actor class {base} ({_where(found)}); Ray "
                              "refuses to define a subclass of an actor class, in every "
                              "worker that imports it",
            "subclass the plain class and decorate only the subclass with @ray.remote")
    if not any(_is_remote(d) for d in found.node.decorator_list):
        return Verdict(
            "actor-class", f"is not an actor class: {_where(found)} defines it without "
                           "@ray.remote, so Ray cannot start it as an actor",
            "decorate the class with @ray.remote")
    return PASS


def judge_environment(fqn: str, get_actor_python_env: Callable[[str], object] | None,
                      tree_root: str | None = None) -> Verdict:
    """The live-state half: the tree's own registry answers for the class. The fix names
    the environment the tree registers for the class's base (`tree_root`: the folder
    holding the run's `nemo_rl`)."""
    if get_actor_python_env is None:
        return PASS
    try:
        get_actor_python_env(fqn)
    except ValueError:
        from nemo_rl_workers.guard.environment_fix import environment_fix

        return Verdict(
            "actor-environment", "has no actor environment registered (the tree's "
                                 "get_actor_python_env refuses it)",
            environment_fix(fqn, tree_root))
    return PASS


def is_own(file: str, own_root: str | None) -> bool:
    """Whether a file is part of the user's NeMo-RL package (upstream's own code)."""
    return own_root is not None and os.path.realpath(file).startswith(own_root + os.sep)


def own_class(fqn: str, index: SourceIndex, own_root: str | None) -> bool:
    """Whether the class's source is in the user's NeMo-RL package."""
    try:
        found = index.lookup(fqn)
    except Unreadable:
        return False
    return isinstance(found, _Found) and is_own(found.file, own_root)


def own_root_of(package_file: str | None) -> str | None:
    """The folder of the user's `nemo_rl` package (its classes are upstream's own)."""
    if not package_file:
        return None
    return str(Path(package_file).resolve().parent)
