"""The NeMo-RL `verify` judges against, and the contract it judges with there.

Which tree: `--nemo-rl PATH`; else the checkout holding the class's source; else the
`nemo_rl` the environment would import; else (or with `--reference`) the reference. Against
a user's tree, a built-in contract (`--protocol PolicyWorker`) stands for that tree's
Protocol of the class's role, as `audit --emit-protocols` writes it
(`checks.contract.tree_protocols`): a correct v0.7.0 extension is not judged by the signatures of
upstream after PR #4176. A Protocol given by FQN is the user's own and is kept.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nemo_rl_workers.checks.contract.tree_protocols import TreeProtocol
    from nemo_rl_workers.findings.reporter import Reporter
    from nemo_rl_workers.tree.revision import Revision


@dataclass(frozen=True)
class Judged:
    """The revision judged, the folder the class is taken from first (None: the import
    path as it is) and the tree's Protocol the contract stands for (None: as given)."""

    revision: Revision
    tree_root: str | None
    protocol: TreeProtocol | None

    @property
    def line(self) -> str | None:
        """The report's first line, where a tree (not the reference) is judged."""
        if self.revision.is_reference and self.tree_root is None:
            return None
        return f"NeMo-RL: {self.revision.label()}"

    def as_json(self) -> dict[str, Any]:
        """What the JSON report adds: the revision, and the tree's Protocol judged with."""
        if self.line is None:
            return {}
        found: dict[str, Any] = {"nemo_rl": self.revision.as_json()}
        if self.protocol is not None:
            found["tree_protocol"] = {"name": self.protocol.name, "driver": self.protocol.driver,
                                      "worker": self.protocol.worker}
        return found


def judged_against(args: argparse.Namespace, say: Reporter) -> Judged | None:
    """The revision and contract for `verify` (see the module docstring); None after one
    line on stderr when the tree or the cache cannot be used, the class does not exist, or
    the tree has no Protocol the contract can stand for."""
    from nemo_rl_workers.tree.checkout import UnusableCheckout, find_checkout
    from nemo_rl_workers.tree.revision_build import selects_through_library
    from nemo_rl_workers.tree.revisions import Revisions
    from nemo_rl_workers.tree.stage import revision_of

    revisions = Revisions(args, say.err)
    try:
        checkout = find_checkout(args.nemo_rl, (), args.reference, classes=[args.fqn])
        # A tree that selects through this library (the runtime beside the tool) is the
        # reference: said at once, no model of it built or kept in the cache.
        revision = (revision_of(checkout) if checkout is not None
                    and selects_through_library(checkout.root) else revisions(checkout))
    except UnusableCheckout as bad:
        say.notice(str(bad))
        return None
    finally:
        revisions.say_notes()
    if revision is None:
        return None
    given = checkout is not None and checkout.how == "--nemo-rl"
    tree_root = str(checkout.root) if checkout is not None and (
        given or not revision.is_reference) else None
    missing = _missing(args.fqn, tree_root)
    if missing is not None:
        say.notice(f"FQN={missing}")
        return None
    if revision.is_reference or tree_root is None:
        return Judged(revision, tree_root, None)
    from contracts.protocols import PROTOCOLS

    if args.protocol not in PROTOCOLS:
        return Judged(revision, tree_root, None)
    found = _tree_protocol(args, tree_root, revision)
    if isinstance(found, str):
        say.notice(f"{args.fqn} cannot be verified against NeMo-RL {revision.label()}: {found}")
        return None
    return Judged(revision, tree_root, found)


def _missing(fqn: str, tree_root: str | None) -> str | None:
    """The one line for a class that does not exist (its source says so), naming the
    closest classes of the tree and of the user's folders; None where it exists."""
    from nemo_rl_workers.tree.class_names import (
        class_suggestions,
        missing_class,
        no_such_class,
        user_roots,
    )
    from nemo_rl_workers.tree.source import ImportRoots

    roots = ImportRoots.of_this_interpreter()
    if tree_root is not None:
        roots = roots.searched_first([tree_root])
    why = missing_class(fqn, roots)
    if why is None:
        return None
    return no_such_class(fqn, why, class_suggestions(fqn, user_roots(roots)))


def _tree_protocol(args: argparse.Namespace, tree_root: str,
                   revision: Revision) -> TreeProtocol | str:
    from nemo_rl_workers.checks.contract.tree_protocols import contract_roles, tree_protocol
    from nemo_rl_workers.guard.driver_model import build, driver_model
    from nemo_rl_workers.model.registry import RegistryError, default_registry

    try:
        rows = [(r.role, r.protocol, r.quant_protocol) for r in default_registry().rows()]
    except RegistryError as bad:
        return str(bad)
    # The tree's Protocols, as the guard keeps them (the content cache): read afresh and
    # stored nowhere with --no-cache.
    model = build(Path(tree_root)) if args.no_cache else driver_model(tree_root)
    return tree_protocol(args.protocol, args.fqn, tree_root,
                         contract_roles(args.protocol, rows), revision.drivers, model.roles,
                         model.protocols)
