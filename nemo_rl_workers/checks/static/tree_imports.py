"""Imports of the tree's own package that the tree cannot satisfy, in an extension's modules.

An extension written for another NeMo-RL revision may import a module or a name this tree
does not define (`from nemo_rl.utils.nsys import X` where the tree's `nsys` has no `X`):
its module then fails to import in the worker's own process, after the job has taken its
GPUs. Judged from the source model alone, for `audit` and `verify --static` alike: only
imports a module runs whenever it is imported (`Module.imports_run`: not those inside
`try`, `if` or a function), only of the tree's package, and only where the tree's source
says for certain that the module or the name is absent. A module that could not be read,
a star import or a module `__getattr__` leaves the name open: never flagged.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from nemo_rl_workers.findings.registry import IMPORT_FAILS
from nemo_rl_workers.reading.recorded_reads import FOLDER, kind_of
from nemo_rl_workers.tree.checkout import PACKAGE
from nemo_rl_workers.tree.source import SourceTree


@dataclass(frozen=True)
class MissingImport:
    """One import statement of `module` the tree cannot satisfy."""

    module: str  # the importing module
    file: str
    line: int
    statement: str  # the failing part: `from a.b import c`, or `import a.b`
    name: str  # the module or name that is absent
    missing: str  # why, in words

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def args(self) -> tuple[tuple[str, str], ...]:
        """The arguments of the registry's sentence (`registry.IMPORT_FAILS`)."""
        return (("module", self.module), ("statement", self.statement),
                ("line", str(self.line)), ("missing", self.missing))

    def message(self) -> str:
        return IMPORT_FAILS.render(dict(self.args))


def missing_tree_imports(tree: SourceTree, modules: Iterable[str],
                         package: str = PACKAGE) -> list[MissingImport]:
    """Every import of `package` in `modules` (the extension's own, never the tree's) that
    the tree's source shows cannot succeed, in module and line order."""
    out: list[MissingImport] = []
    for name in dict.fromkeys(modules):
        if name == package or name.startswith(f"{package}."):
            continue
        module = tree.module(name)
        if module is None:
            continue
        for stmt in module.imports_run:
            if stmt.source != package and not stmt.source.startswith(f"{package}."):
                continue
            wanted = [(stmt.source, None)] if not stmt.names else [
                (stmt.source, n) for n in stmt.names if n != "*"]
            for source, attribute in wanted:
                missing = _absent(tree, source, attribute, package)
                if missing is not None:
                    out.append(MissingImport(
                        name, module.file, stmt.line,
                        f"from {source} import {attribute}" if attribute else f"import {source}",
                        f"{source}.{attribute}" if attribute else source, missing))
                    break  # the statement fails at its first absent name
    return out


def _absent(tree: SourceTree, source: str, attribute: str | None,
            package: str) -> str | None:
    """Why `from source import attribute` (or `import source`) fails against the tree, or
    None when it succeeds or the source does not say."""
    if _unreadable(tree, source) or (tree.module(package) is None
                                     and not _is_folder(tree, package)):
        return None  # the tree (or that module) is not here to judge by
    parts = source.split(".")
    for cut in range(2, len(parts) + 1):  # each package on the way must exist
        prefix = ".".join(parts[:cut])
        if tree.module(prefix) is None and not _is_folder(tree, prefix):
            if _unreadable(tree, prefix):
                return None
            return f"this NeMo-RL has no module {prefix}"
    if attribute is None:
        return None
    module = tree.module(source)
    if tree.module(f"{source}.{attribute}") is not None or _is_folder(
            tree, f"{source}.{attribute}") or _unreadable(tree, f"{source}.{attribute}"):
        return None  # a submodule
    if module is None:  # a namespace folder: only its submodules can be imported
        return f"{source} (a folder of this NeMo-RL) has no module {attribute}"
    if attribute in module.bound or module.open_names:
        return None
    return f"this NeMo-RL's {source} defines no {attribute} ({_shown(tree, module.file)})"


def _paths(tree: SourceTree, dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [os.path.join(root, *parts) for root in tree.roots]


def _is_folder(tree: SourceTree, dotted: str) -> bool:
    return any(kind_of(path) == FOLDER for path in _paths(tree, dotted))


def _unreadable(tree: SourceTree, dotted: str) -> bool:
    """A file of that module the model could not read or parse (it may define anything)."""
    files = {os.path.normpath(f) for path in _paths(tree, dotted)
             for f in (f"{path}.py", os.path.join(path, "__init__.py"))}
    return any(os.path.normpath(problem.file) in files for problem in tree.problems)


def _shown(tree: SourceTree, file: str) -> str:
    """A tree's file as a report names it: from the root that holds it."""
    for root in tree.roots:
        try:
            relative = os.path.relpath(file, root)
        except ValueError:
            continue
        if not relative.startswith(".."):
            return relative
    return file
