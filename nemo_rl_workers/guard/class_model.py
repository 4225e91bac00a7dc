"""The user's class as source: its own folder, read on demand, with the tree behind it.

The class's module is found on the driver's import path (`locate`); the import root it is
found in is the subject folder (`roots[0]` of a `DemandTree`: its classes are the user's),
the tree (the folder holding its `nemo_rl`) is where its bases are found. Only what name
resolution asks for is read: the class's module, its bases' modules and what they import,
never the whole tree (the tree's drivers come from `driver_model`). A class in
site-packages or dist-packages is not the user's folder: only the tree is read for it (a
class not found there is undecided and passes). Once a process per (folder, tree).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nemo_rl_workers.tree.source import ClassInfo, Resolver, SourceTree


@dataclass(frozen=True)
class ClassModel:
    tree: SourceTree
    resolver: Resolver
    folder: str | None  # the user's folder, None where the class is not in one

    def info(self, fqn: str) -> ClassInfo | None:
        from nemo_rl_workers.tree.source import resolve_fqn

        return resolve_fqn(self.tree, fqn)

    def owns(self, file: str) -> bool:
        """Whether `file` is the user's (in the class's folder), not the tree's."""
        return self.folder is not None and file.startswith(self.folder.rstrip("/") + "/")


def class_folder(fqn: str) -> str | None:
    """The import root the class's module is found in, when it is a folder of the user's
    own (never site-packages or dist-packages)."""
    from nemo_rl_workers.tree.source import ImportRoots, locate

    found = locate(fqn.rpartition(".")[0], ImportRoots.of_this_interpreter())
    if isinstance(found, str):
        return None
    root = str(found.root)
    if "site-packages" in root or "dist-packages" in root:
        return None
    return root


def class_model(fqn: str, tree_root: str) -> ClassModel:
    folder = class_folder(fqn)
    return folder_model(folder if folder != tree_root else None, tree_root)


@functools.cache
def folder_model(folder: str | None, tree_root: str) -> ClassModel:
    """The model of the classes of `folder` (the user's), their bases found in the tree."""
    from nemo_rl_workers.tree.source import Resolver, demand_tree

    roots = (folder, tree_root) if folder is not None else (tree_root,)
    tree = demand_tree(tuple(Path(r) for r in roots))
    return ClassModel(tree, Resolver(tree), folder)
