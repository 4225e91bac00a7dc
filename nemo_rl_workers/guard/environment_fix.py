"""The fix of an `actor-environment` refusal: the environment to register the class with.

The one the tree registers for the class the refused class subclasses
(`tree.base_environment`), read from the tree's model (the revision's actor-environment
registry, through the content cache every command uses) and the class's own source
(`class_model`); `PY_EXECUTABLES.SYSTEM` (the driver's own interpreter) where it
subclasses no class of the tree's registry. Computed only for a refusal.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nemo_rl_workers.tree.base_environment import BaseEnvironment

REGISTRY_MODULE = "nemo_rl.distributed.ray_actor_environment_registry"
DRIVERS_OWN = "PY_EXECUTABLES.SYSTEM"


def environment_fix(fqn: str, tree_root: str | None) -> str:
    """The fix sentence: register `fqn` with its base's environment (see the module
    docstring); `tree_root` is the folder holding the run's `nemo_rl`, None where unknown."""
    try:
        found = base_environment_of(fqn, tree_root) if tree_root is not None else None
    except Exception:  # noqa: BLE001 - the refusal stands; only its fix is the general one
        found = None
    register = f'register it before the group is made: ACTOR_ENVIRONMENT_REGISTRY["{fqn}"] = '
    if found is None:
        return f"{register}{DRIVERS_OWN} ({REGISTRY_MODULE})"
    base = _short(found.base)
    if len(found.environments) == 1:
        actor = _short(found.registered[0][0])
        return (f"{register}{found.environments[0]} ({REGISTRY_MODULE}): the environment the "
                f"tree registers for {actor}, the actor class of its base {base}")
    each = ", ".join(f"{environment} for {_short(name)}" for name, environment in
                     found.registered)
    return (f"{register}the environment of the actor class of its base {base} it stands for "
            f"({REGISTRY_MODULE}): the tree registers {each}")


def base_environment_of(fqn: str, tree_root: str) -> BaseEnvironment | None:
    """What the tree registers for the base of `fqn` (its source found on this process's
    import path, its bases in the tree), from the tree's model."""
    from nemo_rl_workers.guard.class_model import class_model
    from nemo_rl_workers.tree.base_environment import base_environment

    model = class_model(fqn, tree_root)
    return base_environment(fqn, model.tree, model.resolver, _registry(tree_root))


def _registry(tree_root: str) -> dict[str, str]:
    """The tree's actor-environment registry, as its model (the revision) holds it."""
    from nemo_rl_workers.cache.folder import model_cache_dir
    from nemo_rl_workers.cache.store import CacheDirError, Store
    from nemo_rl_workers.tree.checkout import Checkout
    from nemo_rl_workers.tree.stage import revision_of

    try:
        cache: Store | None = Store.open(model_cache_dir(), create=False)
    except CacheDirError:  # the guard's driver model says so where it opens it
        cache = None
    return dict(revision_of(Checkout(Path(tree_root), "the guarded run's nemo_rl"),
                            cache).environments)


def _short(fqn: str) -> str:
    return fqn.rpartition(".")[2]
