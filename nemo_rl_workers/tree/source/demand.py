"""A source model read on demand: a module is located, read and modelled the first time
name resolution asks for it, and never otherwise.

The one model of classes outside a tree's own model: an extension's class and its bases
(`verify --static`'s ancestry and imports, the audit's protocols), the runtime guard's
subject (its judgement and its class rules). The class's module, its bases' modules and
what they import along the way are read, a few files instead of the whole tree. Modules
are found as the import system would (`locate` over the roots, in order, editable
installs' maps included: files only, nothing executed) and read through the guarded
reader; one that cannot be found, read or parsed is absent (a base there is `unknown` on
the MRO, never a pass claimed about it), its reason in `absent` (and a read or parse
failure in `problems`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.tree.source.build import model_module
from nemo_rl_workers.tree.source.lookup import ImportRoots, RootListing, locate
from nemo_rl_workers.tree.source.model import ClassInfo, Module, SourceTree
from nemo_rl_workers.tree.source.reading import SourceProblem, read_source
from nemo_rl_workers.tree.source.resolve import MAX_HOPS, resolve_local


@dataclass(frozen=True)
class Absent:
    """Why a module asked for is not in the model: `reason` in words; `problem` when its
    file was found but cannot be read or parsed (not a verdict on the module: Python may
    import it fine)."""

    reason: str
    problem: SourceProblem | None = None


@dataclass
class DemandTree(SourceTree):
    """`roots[0]` is the folder whose classes are the subject (a user's own); the rest
    are where their bases are found. `import_roots`: the interpreter's import path these
    roots come from, with its editable installs (None: `roots` alone)."""

    import_roots: ImportRoots | None = None
    absent: dict[str, Absent] = field(default_factory=dict)
    _listing: RootListing = field(default_factory=RootListing)

    def module(self, name: str) -> Module | None:
        found = super().module(name)
        if found is not None or name in self.absent:
            return found
        roots = self.import_roots if self.import_roots is not None else ImportRoots(self.roots)
        located = locate(name, roots, self._listing)
        if isinstance(located, str):
            self.absent[name] = Absent(located)  # asked once: a miss is not looked for again
            return None
        text = read_source(located.file)
        if isinstance(text, SourceProblem):
            self.problems.append(text)
            self.absent[name] = Absent(str(text), text)
            return None
        self.files_read += 1
        model_module(self, located.file, name, text)
        module = self.modules.get(name)
        if module is None:
            problem = self.problems[-1] if self.problems else SourceProblem(
                str(located.file), "cannot be modelled")
            self.absent[name] = Absent(str(problem), problem)
        return module


def demand_tree(roots: ImportRoots | tuple[str | Path, ...]) -> DemandTree:
    """An empty model over `roots` (an interpreter's import path, or folders in order),
    filled as it is asked."""
    if isinstance(roots, ImportRoots):
        return DemandTree(roots=roots.paths, import_roots=roots)
    return DemandTree(roots=tuple(str(r) for r in roots))


def find_class(tree: DemandTree, fqn: str) -> ClassInfo | str:
    """The class statement `fqn` names (through re-exports and aliases), or why not, in
    words: the module that cannot be found or read, the name its module does not bind,
    the expression a name is bound by."""
    current = fqn
    for _ in range(MAX_HOPS):
        if current in tree.classes:
            return tree.classes[current]
        parts = current.split(".")
        module: Module | None = None
        why: str | None = None
        rest: list[str] = []
        for cut in range(len(parts) - 1, 0, -1):
            got = tree.module(".".join(parts[:cut]))
            if got is not None:
                module, rest = got, parts[cut:]
                break
            absent = tree.absent.get(".".join(parts[:cut]))
            why = why or (absent.reason if absent is not None else None)
        through = "" if current == fqn else f" (through {current})"
        if module is None:
            return f"{why or f'{current!r} names no module'}{through}"
        head, tail = rest[0], rest[1:]
        if head in module.classes:
            info: ClassInfo | None = module.classes[head]
            for name in tail:
                info = tree.classes.get(f"{info.fqn}.{name}") if info else None
            return info or f"{current} is not defined in {module.file}"
        if head in module.imports:
            current = ".".join([module.imports[head], *tail])
            continue
        alias = module.assignments.get(head)
        target = ast.unparse(alias) if alias is not None else ""
        if all(part.isidentifier() for part in target.split(".")):
            current = ".".join([resolve_local(module, target), *tail])
            continue
        if alias is not None:
            return f"{current} is bound by an expression in {module.file}{through}"
        return (why if why is not None and len(rest) > 1
                else f"module {module.name} defines no {head!r} ({module.file}){through}")
    return f"{fqn} is re-exported through more than {MAX_HOPS} names"
