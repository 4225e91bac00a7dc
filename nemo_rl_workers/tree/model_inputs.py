"""What a model of a NeMo-RL tree is made from: the inputs its cache entries are keyed by.

Every module of the tree's `nemo_rl` the source walk lists (each by its guarded digest: a
file the reader would refuse is keyed by its refusal, never read or hashed), what the walk
could not list, the tree's folder, and this program's code, interpreter and module size
cap. Models of one tree (the revision, the guard's drivers) are computations of their own
over the same inputs; the digests of unchanged files come from the store's index of the
tree (`cache.digest.DigestIndex`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.cache.digest import DigestIndex, FileDigests, digests, program_digest
from nemo_rl_workers.cache.store import Store
from nemo_rl_workers.tree.checkout import PACKAGE
from nemo_rl_workers.tree.source.reading import MAX_SOURCE_BYTES, SourceProblem, discover


@dataclass(frozen=True)
class TreeInputs:
    folder: str
    unlisted: tuple[str, ...]  # what the source walk could not list
    files: FileDigests
    program: str


def tree_inputs(root: Path, store: Store | None = None) -> TreeInputs:
    """The inputs of every model of the tree at `root` (see the module docstring)."""
    problems: list[SourceProblem] = []
    files = list(discover(root / PACKAGE, problems, boundary=root))
    index = DigestIndex.of(store, root)
    inputs = TreeInputs(str(root), tuple(str(p) for p in problems),
                        digests(files, MAX_SOURCE_BYTES, index),
                        program_digest(MAX_SOURCE_BYTES, index))
    index.save()
    return inputs
