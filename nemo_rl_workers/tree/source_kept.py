"""The source model a run has already built, lent to the rules that walk it next.

Building a tree's revision models the modules the tree's own rules then walk (the
algorithm's `setup`, the drivers' constructors); reading and modelling them a second
time would be a third of a first `check`. One model is kept per process, for the tree
built last, and let go before a wider model of the same tree is read (the audit's, which
reads entry scripts and stub folders too), so two are never alive at once: what a big
tree costs in memory stays one model's.

In a process that is the tool's own (the command line: `freeze_kept_models`), a kept
model is moved out of the cyclic collector's sight (`gc.freeze`, as servers do with what
they load at start-up): built with the collector paused, its million objects
are all young, and the next collections would walk them all, twice (1.7 s of a cold
`check` on upstream's tree), to free nothing. What else is alive then is frozen with it
until the model is let go, and collected then: a long-lived process (pytest with the
plugin, the suite) that judges tree after tree holds no garbage past the next tree.
Letting go runs before a model is built (`revision_build`), so what a collection walks
then is the heap without any tree's model. In someone else's process (the pytest plugin,
a guarded training driver) the collector is left as it is.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nemo_rl_workers.tree.source import SourceTree

_kept: dict[str, SourceTree] = {}
_freezing = [False]


def freeze_kept_models() -> None:
    """This process is the tool's own: kept models are frozen (see the module docstring)."""
    _freezing[0] = True


def keep(root: Path | str, tree: SourceTree) -> None:
    """Keep `tree` (a model of the `nemo_rl` package at `root`) in place of any other."""
    let_go()
    _kept[str(Path(root).resolve())] = tree
    if _freezing[0]:
        gc.freeze()


def kept(root: Path | str) -> SourceTree | None:
    return _kept.get(str(Path(root).resolve()))


def let_go() -> None:
    """Drop the kept model, and collect what was frozen with it."""
    if _kept:
        _kept.clear()
        if _freezing[0]:
            gc.unfreeze()
            gc.collect()


def tree_source(root: Path | str) -> SourceTree:
    """The model of the tree's `nemo_rl` package: the one kept, else read now with
    nothing modelled until asked for (a check reads a few modules, not all) and kept."""
    found = kept(root)
    if found is None:
        from nemo_rl_workers.tree.checkout import PACKAGE
        from nemo_rl_workers.tree.source import read_tree

        found = read_tree(Path(root), packages=[PACKAGE], eager=lambda _text: False)
        keep(root, found)
    return found
