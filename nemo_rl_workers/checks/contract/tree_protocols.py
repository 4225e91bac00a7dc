"""Which of a NeMo-RL tree's Protocols a built-in contract stands for, for one class.

`verify PolicyWorker` against a user's tree judges the class against what that tree's
drivers call on its workers (the Protocols `audit --emit-protocols` writes for it), never
against the reference's (upstream after PR #4176), whose signatures an older tree does
not have. The contract names a role (the worker table's rows: `PolicyWorker` is the
policy's); the tree's drivers of that role each have one Protocol per worker class they
can start; the class is judged against the one of the worker it shares its nearest base
with (the audit's rule for an extension, `extension_rules.find_role`), read from source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.checks.audit.extension_rules import RoleWorker, find_role
from nemo_rl_workers.tree.source import ImportRoots, Resolver, demand_tree, locate, resolve_fqn


@dataclass(frozen=True)
class TreeProtocol:
    """The tree's Protocol a contract stands for: its class name and its module's text."""

    contract: str  # the built-in contract asked for, e.g. "PolicyWorker"
    name: str  # the emitted Protocol's class name, e.g. "PolicyDTensorPolicyWorkerProtocol"
    text: str  # its module, as the emission writes it (imports and the class)
    driver: str  # the tree's driver that calls it, e.g. "Policy"
    worker: str  # the default worker FQN it is of

    def described(self) -> str:
        """'PolicyWorker as this tree has it: PolicyDTensorPolicyWorkerProtocol (what
        Policy calls on ...DTensorPolicyWorker's workers)'."""
        return (f"{self.contract} as this tree has it: {self.name} (what {self.driver} calls "
                f"on {self.worker} and its subclasses)")


def contract_roles(contract: str, rows: Sequence[tuple[str, str, str | None]]) -> set[str]:
    """The roles whose rows (role, Protocol, quantized Protocol) use `contract`."""
    return {role for role, protocol, quantized in rows if contract in (protocol, quantized)}


def class_roots(fqn: str, tree_root: str) -> tuple[Path, ...]:
    """The folders a source model of `fqn` reads: the import root its module is found in
    (the tree searched first), then the tree."""
    roots = ImportRoots.of_this_interpreter().searched_first([tree_root])
    found = locate(fqn.rpartition(".")[0], roots)
    tree = Path(tree_root)
    if isinstance(found, str) or found.root == tree:
        return (tree,)
    return (found.root, tree)


def tree_protocol(
    contract: str,
    fqn: str,
    tree_root: str,
    roles: set[str],
    drivers: Mapping[str, str],
    emitted: Mapping[str, Sequence[tuple[str, str]]],
    protocols: Mapping[str, str],
) -> TreeProtocol | str:
    """The tree's Protocol `contract` stands for when `fqn` is judged, or why there is none
    (one line). `drivers`: driver -> role (the revision's); `emitted`: driver -> (default
    worker FQN, Protocol name) and `protocols`: Protocol name -> module text (the tree's
    emission)."""
    candidates = [RoleWorker(driver, worker)
                  for driver in sorted(d for d, role in drivers.items() if role in roles)
                  for worker, name in emitted.get(driver, ()) if name in protocols]
    if not candidates:
        return (f"the tree has no Protocol of the {' or '.join(sorted(roles)) or 'no'} role "
                f"{contract} names (no driver of it calls its workers by name)")
    exact = [c for c in candidates if c.fqn == fqn]  # one of the tree's own workers
    chosen = exact[0] if exact else candidates[0] if len(candidates) == 1 else _nearest(
        fqn, tree_root, candidates)
    if chosen is None:
        workers = ", ".join(sorted({c.fqn for c in candidates}))
        return (f"{fqn} extends none of the worker classes the tree's drivers of "
                f"{contract}'s role start ({workers}); pass --reference to judge it by the "
                "reference's contract, or --protocol one of the Protocols "
                "`audit --emit-protocols` writes for the tree")
    name = dict(emitted[chosen.driver])[chosen.fqn]
    return TreeProtocol(contract, name, protocols[name], chosen.driver, chosen.fqn)


def _nearest(fqn: str, tree_root: str, candidates: Sequence[RoleWorker]) -> RoleWorker | None:
    tree = demand_tree(class_roots(fqn, tree_root))
    resolver = Resolver(tree)
    info = resolve_fqn(tree, fqn)
    if info is None:
        return None
    chosen, _ = find_role(resolver, info, candidates)
    return chosen
