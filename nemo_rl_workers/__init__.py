"""nemo-rl worker contracts: the tool (`nemo-rl-workers`, the checks, the pytest plugin).

Its own import name, beside NeMo-RL's `nemo_rl`, never in place of it. The package is laid
out in the order the data flows:

- `reading`: guarded files, configs (`defaults:`, overrides, interpolation), source trees;
- `model`: the selection table, the registry, the resolver and the config rules;
- `checks`: contract verification, static checks and their cache, the audit, cluster fit;
- `findings`: reports and the output formats (text, JSON, GitHub, SARIF, JUnit);
- `commands`: the command line, the pytest plugin.

Importing this package costs nothing: the selection API below is loaded on first use, so
`nemo-rl-workers --help` and pytest's loading of the plugin import no check, no YAML
library and no registry. Nothing here imports torch, Ray, vLLM or ModelOpt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nemo_rl_workers.lazy import lazy_api

__version__ = "0.1.0"

# The curated API: name -> the module that defines it.
_API = {
    "validate_fqn": "nemo_rl_workers.model.fqn",
    "ActorEnvironment": "nemo_rl_workers.model.registry",
    "WorkerPlugin": "nemo_rl_workers.model.registry",
    "WorkerRegistry": "nemo_rl_workers.model.registry",
    "WorkerRow": "nemo_rl_workers.model.registry",
    "default_registry": "nemo_rl_workers.model.registry",
    "Resolution": "nemo_rl_workers.model.resolver",
    "apply_resolution": "nemo_rl_workers.model.resolver",
    "resolve_config": "nemo_rl_workers.model.resolver",
    "resolve_generation": "nemo_rl_workers.model.resolver",
    "resolve_policy": "nemo_rl_workers.model.resolver",
}

if TYPE_CHECKING:
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
    "__version__",
    "apply_resolution",
    "default_registry",
    "resolve_config",
    "resolve_generation",
    "resolve_policy",
    "validate_fqn",
]


__getattr__ = lazy_api(__name__, globals(), _API)
