"""`Policy(worker_extension_cls_fqn=...)` is flagged by type checkers (rule R0).

A self-contained copy of the overload pattern `nemo_rl.models.policy.lm_policy.Policy`
uses, so the mechanism is checked even when that class changes: the deprecated
keyword lives in its own `@deprecated` overload, the plain call matches the other.
`deprecated_policy_argument.py` checks the real class the same way.
"""

from __future__ import annotations

from typing import overload

from typing_extensions import deprecated

from nemo_rl.config.schema import PolicyConfig


class Cluster:
    """Stands in for RayVirtualCluster: only its type matters to the overloads."""


class Policy:
    @overload
    def __init__(
        self, cluster: Cluster, config: PolicyConfig, *, name_prefix: str = "lm_policy"
    ) -> None: ...

    @overload
    @deprecated("Set policy.worker_extension_cls_fqn in the config instead.")
    def __init__(
        self,
        cluster: Cluster,
        config: PolicyConfig,
        *,
        worker_extension_cls_fqn: str,
        name_prefix: str = "lm_policy",
    ) -> None: ...

    def __init__(
        self,
        cluster: Cluster,
        config: PolicyConfig,
        *,
        name_prefix: str = "lm_policy",
        worker_extension_cls_fqn: str | None = None,
    ) -> None:
        self.name_prefix = name_prefix
        self.worker_extension_cls_fqn = worker_extension_cls_fqn


def build(cluster: Cluster, config: PolicyConfig) -> list[Policy]:
    return [
        Policy(cluster, config),
        Policy(cluster, config, name_prefix="student"),
        Policy(cluster, config, worker_extension_cls_fqn="pkg.mod.Worker"),  # type: ignore[deprecated]  # pyrefly: ignore[deprecated]  # R0
    ]
