"""What the tree needs of an extension class before its driver can start it, from source:

- an actor class (`extension-not-actor`): where the worker the extension stands for is a
  `@ray.remote` class, the tree's driver starts the class it is named as an actor
  (`RayWorkerBuilder` takes the FQN and calls `.options(...)` on it), so a plain class
  cannot be started. Only the extension's own decorators are read, by the test the
  runtime guard's `actor-class` rule uses (`knowledge.makes_actor`).
- a registered actor environment (`extension-unregistered`): where the tree registers its
  worker's environment in its actor-environment registry, it refuses an actor class the
  registry lacks; the class must be added to it by a module of the tree or under
  `--path` (`ACTOR_ENVIRONMENT_REGISTRY["pkg.Cls"] = ...`), as the runtime guard's
  `actor-environment` rule asks the live registry.

A registry the source cannot read whole leaves the second undecided (a note, never a
finding).
"""

from __future__ import annotations

import ast

from nemo_rl_workers.checks.audit.extension_rules import ExtensionAudit
from nemo_rl_workers.checks.audit.rules import Finding
from nemo_rl_workers.findings import registry as said
from nemo_rl_workers.tree.drivers import DriverSide
from nemo_rl_workers.tree.knowledge import (
    ACTOR_ENVIRONMENT_REGISTRIES,
    is_actor_class,
    makes_actor,
)
from nemo_rl_workers.tree.source import ClassInfo, Resolver, SourceTree, resolve_fqn


def setup_findings(tree: SourceTree, resolver: Resolver, side: DriverSide,
                   audit: ExtensionAudit) -> list[Finding]:
    """The extension's findings on how its driver starts it (none where it stands for no
    worker of the tree's)."""
    info, stands_for = audit.info, audit.stands_for
    if info is None or stands_for is None:
        return []
    worker = resolve_fqn(tree, stands_for.fqn)
    if worker is None:
        return []
    out = []
    actor = _not_actor(resolver, info, worker, stands_for.driver)
    if actor is not None:
        out.append(actor)
    registered = _unregistered(tree, side, info, worker, stands_for.driver, audit)
    if registered is not None:
        out.append(registered)
    return out


def _not_actor(resolver: Resolver, info: ClassInfo, worker: ClassInfo,
               driver: str) -> Finding | None:
    if is_actor_class(info.decorators) or not is_actor_class(worker.decorators):
        return None
    if any(is_actor_class(c.decorators) for c in resolver.mro(info).classes[1:]):
        return None  # a subclass of an actor class: `extension-subclasses-actor` says so
    decorator = next(d for d in worker.decorators if makes_actor(d))
    return Finding(
        said.NOT_AN_ACTOR, driver, "__init__", info.fqn, info.where, worker.where,
        (("where", info.where), ("base", worker.fqn), ("decorator", _one_line(decorator))))


def _unregistered(tree: SourceTree, side: DriverSide, info: ClassInfo, worker: ClassInfo,
                  driver: str, audit: ExtensionAudit) -> Finding | None:
    if worker.fqn not in side.environments or info.fqn in side.environments:
        return None  # the tree registers no worker of its own, or it registers this one
    registry = ACTOR_ENVIRONMENT_REGISTRIES[0]
    if side.registry_problems:
        audit.unknown.append(
            f"{info.fqn}: whether {registry} holds it is not known: "
            f"{'; '.join(side.registry_problems)}")
        return None
    module = tree.modules.get(side.registered_in.get(worker.fqn, ""))
    environment = side.environments[worker.fqn]
    shown = environment
    if module is not None and environment in module.assignments:
        # A name of the registry's module (`VLLM_EXECUTABLE`): import it from there, so
        # the class runs where the tree's worker runs under every switch the name reads.
        shown = (f"{environment} (from {module.name}, where {environment} = "
                 f"{_one_line(ast.unparse(module.assignments[environment]))})")
    return Finding(
        said.NOT_REGISTERED, driver, "__init__", info.fqn, info.where,
        module.file if module is not None else worker.where,
        (("registry", registry), ("shown", shown), ("base", worker.fqn)))


def _one_line(text: str) -> str:
    return " ".join(text.split())
