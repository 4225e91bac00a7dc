"""A source model read on demand: a module is located, read and modelled the first time
name resolution asks for it, and never otherwise.

For judging one class against a tree whose drivers are already known (the guard's cached
model): the class's module, its bases' modules and what they import along the way are
read, a few files instead of the whole tree. Modules are found as the import system
would (`locate` over `roots`, in order: files only, nothing executed) and read through
the guarded reader; one that cannot be found, read or parsed is absent (a base there is
`unknown` on the MRO, never a pass claimed about it), its reason in `problems`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.tree.source.build import model_module
from nemo_rl_workers.tree.source.lookup import ImportRoots, RootListing, locate
from nemo_rl_workers.tree.source.model import Module, SourceTree
from nemo_rl_workers.tree.source.reading import SourceProblem, read_source


@dataclass
class DemandTree(SourceTree):
    """`roots[0]` is the folder whose classes are the subject (a user's own); the rest
    are where their bases are found."""

    _absent: set[str] = field(default_factory=set)
    _listing: RootListing = field(default_factory=RootListing)

    def module(self, name: str) -> Module | None:
        found = super().module(name)
        if found is not None or name in self._absent:
            return found
        self._absent.add(name)  # asked once: a miss is not looked for again
        located = locate(name, ImportRoots(self.roots), self._listing)
        if isinstance(located, str):
            return None
        text = read_source(located.file)
        if isinstance(text, SourceProblem):
            self.problems.append(text)
            return None
        self.files_read += 1
        model_module(self, located.file, name, text)
        return self.modules.get(name)


def demand_tree(roots: tuple[str | Path, ...]) -> DemandTree:
    """An empty model over `roots`, filled as it is asked."""
    return DemandTree(roots=tuple(str(r) for r in roots))
