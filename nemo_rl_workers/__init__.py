"""Worker selection: the registry of worker classes and the pure resolver.

Import-light on purpose: nothing here imports torch, ray, vllm or modelopt, so
the driver and CI can resolve configs without them.
"""

from nemo_rl_workers.model.fqn import validate_fqn
from nemo_rl_workers.model.registry import (
    ActorEnvironment,
    WorkerPlugin,
    WorkerRegistry,
    WorkerRow,
    default_registry,
)
from nemo_rl_workers.model.resolver import (
    Resolution,
    apply_resolution,
    resolve_config,
    resolve_generation,
    resolve_policy,
)

__all__ = [
    "ActorEnvironment",
    "Resolution",
    "WorkerPlugin",
    "WorkerRegistry",
    "WorkerRow",
    "apply_resolution",
    "default_registry",
    "resolve_config",
    "resolve_generation",
    "resolve_policy",
    "validate_fqn",
]
