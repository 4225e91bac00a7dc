"""The actor environment a class of the user's would run in as the tree registers its base.

An extension subclasses a class of the tree (upstream's `VllmGenerationWorkerImpl`, a
fork's worker) and replaces the worker the tree registers for that class: it needs the
same Python environment (vLLM's, Megatron's). The registry names actor classes, and an
extension usually subclasses the undecorated class an actor class wraps (Ray refuses a
subclass of an actor class), so the registered classes of a base are those whose MRO holds
it, the nearest: the base itself, else the actor class that wraps it directly.

Read from the source model (`SourceTree`, `Resolver`) and the revision's registry
(`Revision.environments`, each environment as the tree names it: `VLLM_EXECUTABLE`,
`PY_EXECUTABLES.SYSTEM`); nothing is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nemo_rl_workers.tree.source import Resolver, SourceTree, resolve_fqn


@dataclass(frozen=True)
class BaseEnvironment:
    base: str  # the class of the tree the class subclasses, nearest in its MRO
    registered: tuple[tuple[str, str], ...]  # the nearest registered classes of that base,
    # each with its environment as the tree names it

    @property
    def environments(self) -> tuple[str, ...]:
        """Their environments, once each."""
        return tuple(dict.fromkeys(environment for _, environment in self.registered))


def base_environment(fqn: str, tree: SourceTree, resolver: Resolver,
                     environments: Mapping[str, str]) -> BaseEnvironment | None:
    """The environment the tree registers for the class `fqn` subclasses (see the module
    docstring); None where no class of its MRO is a registered class or a base of one."""
    info = resolve_fqn(tree, fqn)
    if info is None:
        return None
    bases = [c.fqn for c in resolver.mro(info).classes[1:]]
    lines: dict[str, list[str]] = {}

    def line(registered: str) -> list[str]:
        """The MRO of a registered class (its modules read on demand, once)."""
        if registered not in lines:
            found = resolve_fqn(tree, registered)
            lines[registered] = [] if found is None or found.fqn == info.fqn else [
                c.fqn for c in resolver.mro(found).classes]
        return lines[registered]

    for base in bases:
        # Nearest: the fewest classes between the registered class and the base; then the
        # one defined in the base's own module (upstream's actor class beside its `Impl`,
        # not a variant elsewhere that wraps the same `Impl`, such as a quantized one).
        # Those of the base's module first: one that wraps it directly is the nearest any
        # could be, and the other modules (Megatron's, ...) are then never read.
        module = base.rpartition(".")[0]
        local = [name for name in environments if name.rpartition(".")[0] == module]
        for candidates in (local, list(environments)):
            rank = {name: (line(name).index(base), name.rpartition(".")[0] != module)
                    for name in candidates if base in line(name)}
            if rank and (candidates is not local or min(rank.values()) <= (1, False)):
                best = min(rank.values())
                return BaseEnvironment(base, tuple((name, environments[name])
                                                   for name, r in rank.items() if r == best))
    return None
