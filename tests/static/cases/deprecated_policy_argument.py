"""The real `Policy(worker_extension_cls_fqn=...)` is flagged as deprecated (rule R0).

The argument still works at runtime (with a DeprecationWarning); type checkers flag
it through `lm_policy.Policy`'s `@deprecated` overload, so CI catches new uses.
"""

from __future__ import annotations

from nemo_rl.config.schema import PolicyConfig
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy


def build(cluster: RayVirtualCluster, config: PolicyConfig) -> list[Policy]:
    return [
        Policy(cluster, config),
        Policy(cluster, config, name_prefix="student"),
        Policy(cluster, config, worker_extension_cls_fqn="pkg.mod.Worker"),  # type: ignore[deprecated]  # pyrefly: ignore[deprecated]  # R0
    ]
