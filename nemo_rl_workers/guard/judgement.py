"""The class judgement: is a worker group's class one Ray and upstream can start?

Judged before upstream's `RayWorkerGroup.__init__` runs, from two things only:
- the class's source, found on the driver's import path as the import system would
  (`tree.source.locate`: files only, no package `__init__` executed) and modelled on
  demand (`tree.source.demand_tree`), nothing of it imported: the class is defined where
  its FQN says; it is an actor class (`knowledge.is_actor_class`); it is not a subclass
  of one (Ray refuses that at class definition, in the worker's process);
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
from nemo_rl_workers.tree.knowledge import is_actor_class
from nemo_rl_workers.tree.source.demand import DemandTree, demand_tree
from nemo_rl_workers.tree.source.lookup import ImportRoots
from nemo_rl_workers.tree.source.model import ClassInfo, Module


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
    """What a module-level name is bound to: a class statement, a function, an expression
    (`X = ray.remote(Y)`), or an import that leads nowhere the source shows."""

    file: str
    module: str  # the module that binds it
    cls: ClassInfo | None = None
    value: ast.expr | None = None
    function: bool = False


def _module(tree: DemandTree, name: str) -> Module | str:
    """The module `name` from the on-demand model, or why it is not there; Unreadable
    when its file is there but cannot be read or parsed."""
    module = tree.module(name)
    if module is not None:
        return module
    absent = tree.absent.get(name)
    if absent is not None and absent.problem is not None:
        raise Unreadable(f"cannot read the source of {name}: {absent.problem}")
    return absent.reason if absent is not None else f"no source for {name}"


def lookup(tree: DemandTree, fqn: str, depth: int = 0) -> _Found | str:
    """What `module.Name` is bound to, following imports (`from m import Name`, an
    `__init__`'s re-export) a few steps; or why the module or the name is not there."""
    module_name, _, name = fqn.rpartition(".")
    module = _module(tree, module_name)
    if isinstance(module, str):
        return module
    if name in module.classes:
        return _Found(module.file, module.name, module.classes[name])
    if name in module.functions:
        return _Found(module.file, module.name, function=True)
    if name in module.imports:
        found = _Found(module.file, module.name)
        target = lookup(tree, module.imports[name], depth + 1) if depth < 5 else found
        return found if isinstance(target, str) else target
    if name in module.assignments:
        return _Found(module.file, module.name, value=module.assignments[name])
    return f"{module.file} defines no {name}"


def _actor_bases(tree: DemandTree, cls: ClassInfo) -> str | None:
    """The first base of the class that is itself an actor class, as "Name (file:line)"."""
    module = _module(tree, cls.module)
    if isinstance(module, str):
        return None
    for base in cls.node.bases:
        target: _Found | str | None = None
        if isinstance(base, ast.Name):
            target = lookup(tree, f"{module.name}.{base.id}")
        elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) \
                and base.value.id in module.imports:
            target = lookup(tree, f"{module.imports[base.value.id]}.{base.attr}")
        if isinstance(target, _Found) and target.cls is not None \
                and is_actor_class(target.cls.decorators):
            return f"{ast.unparse(base)} ({target.cls.where})"
    return None


def _closest_classes(fqn: str, tree: DemandTree, own_root: str | None) -> str:
    """'did you mean X?' from the classes of the tree and of the user's folders on the
    import path ('' for none); on the refusal's path only, and never a reason to fail."""
    from nemo_rl_workers.model.suggest import did_you_mean
    from nemo_rl_workers.tree.class_names import class_suggestions, user_roots

    try:
        first = [os.path.dirname(own_root)] if own_root is not None else []  # the tree
        roots = tree.import_roots if tree.import_roots is not None else ImportRoots(tree.roots)
        return did_you_mean(class_suggestions(fqn, user_roots(roots, first)))
    except Exception:  # noqa: BLE001 - a hint only: the refusal stands without it
        return ""


def judge_source(fqn: str, tree: DemandTree, own_root: str | None) -> Verdict:
    """The source half: defined, an actor class, not a subclass of one. `tree`: the
    on-demand model of the driver's import path (`source_model`)."""
    bad = fqn_problem(fqn, "ray_actor_class_fqn")
    if bad is not None:
        return Verdict("fqn", f"is not {bad.expected} ({bad.message})",
                       "give RayWorkerBuilder the class's full dotted name")
    module, _, name = fqn.rpartition(".")
    found = lookup(tree, fqn)
    if isinstance(found, str):
        guess = _closest_classes(fqn, tree, own_root)
        return Verdict(
            "defined", f"is not defined where its FQN says: {found}",
            (f"{guess} Otherwise " if guess else "")
            + f"define class {name} in module {module}, or give the FQN of the module that "
            "defines it (the workers import it from there)")
    if is_own(found.file, own_root):
        return PASS  # upstream's own classes are never refused
    if found.cls is None:
        if found.function or isinstance(found.value, ast.Constant):
            what = "a function" if found.function else "a constant"
            return Verdict("actor-class", f"is not a class ({found.file} defines {name} "
                           f"as {what})", "name an @ray.remote class")
        return PASS  # `X = ray.remote(Y)`, or made some other way: never refused from source
    # First: Ray refuses the definition itself, decorated or not.
    base = _actor_bases(tree, found.cls)
    if base is not None:
        return Verdict(
            "actor-subclass", f"subclasses the actor class {base} ({found.cls.where}); Ray "
                              "refuses to define a subclass of an actor class, in every "
                              "worker that imports it",
            "subclass the plain class and decorate only the subclass with @ray.remote")
    if not is_actor_class(found.cls.decorators):
        return Verdict(
            "actor-class", f"is not an actor class: {found.cls.where} defines it without "
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


def own_class(fqn: str, tree: DemandTree, own_root: str | None) -> bool:
    """Whether the class's source is in the user's NeMo-RL package."""
    try:
        found = lookup(tree, fqn)
    except Unreadable:
        return False
    return isinstance(found, _Found) and is_own(found.file, own_root)


def source_model(roots: ImportRoots) -> DemandTree:
    """The on-demand model of the classes on an interpreter's import path that one
    judgement reads (each module parsed once)."""
    return demand_tree(roots)


def own_root_of(package_file: str | None) -> str | None:
    """The folder of the user's `nemo_rl` package (its classes are upstream's own)."""
    if not package_file:
        return None
    return str(Path(package_file).resolve().parent)
