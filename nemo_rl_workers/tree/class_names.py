"""Whether the class an FQN names exists, read from source, and the closest ones that do.

Every command that takes a class (`verify`, `verify --static`, `audit`, a config's
`worker_extension_cls_fqn`) refuses one that does not exist, with "did you mean X?" drawn
from the classes of the NeMo-RL tree and of the user's own folders (`--path`, the import
root the FQN's package is found in): difflib over their FQNs (`model.suggest`). Nothing is
imported; a folder's packages are read only when the FQN's first part, or a close spelling
of it, names them.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import pkgutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from nemo_rl_workers.model.suggest import closest, did_you_mean
from nemo_rl_workers.reading.recorded_reads import FILE, kind_of, note_listing
from nemo_rl_workers.tree.source import (
    ImportRoots,
    Located,
    SourceProblem,
    SourceTree,
    locate,
    read_tree,
)
from nemo_rl_workers.tree.source.parse import parse_file

# A misspelt package is looked for among the top-level names of this many user folders.
MAX_ROOTS = 16


def missing_class(fqn: str, roots: ImportRoots) -> str | None:
    """Why no class `fqn` exists, as its source tells (its module is nowhere on `roots`, or
    binds no such name); None where it exists, or where source cannot tell (a star import,
    a module `__getattr__`, a module file that cannot be read: the import decides)."""
    module, _, name = fqn.rpartition(".")
    if not module:
        return None
    found = locate(module, roots)
    if isinstance(found, str):
        # The FQN may name a module, not a class: another refusal says what it is.
        return None if isinstance(locate(fqn, roots), Located) else found
    if found.file.name == "__init__.py" and isinstance(locate(fqn, roots), Located):
        return None  # a submodule: not a class, said by the check that imports it
    binds = _binds(found.file, name)
    if binds is None or binds:
        return None
    return f"module {module} ({found.file}) has no class {name!r}"


def _binds(file: Path, name: str) -> bool | None:
    """Whether the module at `file` binds `name` at any level (a class, an import, an
    assignment); None where it cannot be told."""
    tree = parse_file(file)
    if isinstance(tree, SourceProblem):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == name or (node.name == "__getattr__" and node in tree.body):
                return True if node.name == name else None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return True
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
    return False


def user_roots(roots: ImportRoots, first: Iterable[str] = ()) -> list[Path]:
    """The folders whose packages may be the user's: `first` (a tree, `--path`), then the
    import path's folders that are not an installation's (site- or dist-packages)."""
    out: list[Path] = []
    for entry in [*first, *roots.paths]:
        if "site-packages" in entry or "dist-packages" in entry or not os.path.isdir(entry):
            continue
        if Path(entry) not in out:
            out.append(Path(entry))
    return out[:MAX_ROOTS]


def class_suggestions(fqn: str, folders: Sequence[Path],
                      trees: Sequence[SourceTree] = ()) -> list[str]:
    """The existing class FQNs closest to `fqn`: the classes of `trees` (already read) and
    of each folder's package that the FQN's first part, or a close spelling, names."""
    top = fqn.split(".")[0]
    candidates: set[str] = set()
    for tree in trees:
        candidates.update(class_fqns(tree))
    for folder in folders:
        names = _top_names(folder)
        for package in [top, *closest(top, names)] if top not in names else [top]:
            if package not in names:
                continue
            if (folder / package).is_dir():
                candidates.update(class_fqns(read_tree(folder, packages=[package])))
            else:  # a top-level module file
                candidates.update(f"{package}.{name}"
                                  for name in _module_classes(folder / f"{package}.py"))
    return closest(fqn, candidates)


def _module_classes(file: Path) -> list[str]:
    """The top-level class names of one module file ([] where it cannot be read)."""
    tree = parse_file(file)
    if isinstance(tree, SourceProblem):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


def no_such_class(fqn: str, why: str, suggestions: Sequence[str]) -> str:
    """The one line: '<fqn>: no such class (<why>); did you mean X?'."""
    guess = did_you_mean(suggestions)
    return f"{fqn}: no such class ({why})" + (f"; {guess}" if guess else "")


def class_fqns(tree: SourceTree) -> list[str]:
    """Every top-level class of the tree's modules (those left pending are modelled now)."""
    out: list[str] = []
    for name in [*tree.modules, *tree.pending]:
        module = tree.module(name)
        if module is not None:
            out.extend(f"{module.name}.{cls}" for cls in module.classes)
    return out


def _top_names(folder: Path) -> set[str]:
    try:
        entries = os.listdir(folder)
    except OSError:
        return set()
    note_listing(folder, entries)
    return {e.removesuffix(".py") for e in entries
            if e.endswith(".py") or kind_of(os.path.join(folder, e, "__init__.py")) == FILE}


# -- classes of modules already imported (`verify`'s import failed on the class)


def module_classes(module_name: str) -> list[str]:
    """FQNs of the classes an already-imported module defines (not those it imports)."""
    module = sys.modules.get(module_name)
    if module is None:
        return []
    found = []
    for name, value in list(vars(module).items()):
        try:  # a member's metaclass may raise on any attribute: it is then no suggestion
            if isinstance(value, type) and value.__module__ == module_name:
                found.append(f"{module_name}.{name}")
        except BaseException:  # noqa: BLE001, S112 - untrusted code, whatever it raises
            continue
    return found


def sibling_modules(module_name: str) -> list[str]:
    """Modules next to `module_name`: in its already-imported parent package, or top-level.

    Only file names are listed; no module is imported.
    """
    parent, _, _ = module_name.rpartition(".")
    if not parent:
        return [m.name for m in pkgutil.iter_modules()]
    search = getattr(sys.modules.get(parent), "__path__", None)
    if search is None:
        return []
    return [f"{parent}.{m.name}" for m in pkgutil.iter_modules(search)]


def importable_fqns(fqn: str, missing_module: str | None) -> list[str]:
    """Close FQNs that could be meant: a sibling of the module that was not found, or a
    class of the module that was (its attribute was not)."""
    module_name = fqn.rpartition(".")[0]
    if missing_module is None:
        return closest(fqn, module_classes(module_name))
    if not module_name.startswith(missing_module):
        return []
    rest = fqn[len(missing_module):]
    return [m + rest for m in closest(missing_module, sibling_modules(missing_module))
            if _defines(m, rest.lstrip("."))]


def _defines(module_name: str, dotted: str) -> bool:
    """Whether `module_name`'s source defines the class `dotted` names (its first part, at
    the top level; deeper parts are modules, taken on trust). Read, never imported: a
    sibling is only suggested where the class would be found."""
    name = dotted.split(".")[0]
    if "." in dotted:
        return True
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):  # a parent that cannot be found: nothing to offer
        return False
    origin = spec.origin if spec is not None else None
    if origin is None or not origin.endswith(".py"):
        return False
    tree = parse_file(Path(origin))
    if isinstance(tree, SourceProblem):
        return False
    return any(isinstance(node, ast.ClassDef) and node.name == name for node in tree.body)
