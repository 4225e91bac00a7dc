"""Worker classes a newcomer might write, for the verify-defaults tests."""

from __future__ import annotations

from typing import Any

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class PositionalRankWorker(AutomodelPolicyWorker):
    """Implements PolicyWorker, but its constructor takes rank positionally and no world size:
    the builder's `Worker(config, rank=..., world_size=...)` cannot bind it."""

    def __init__(self, config: dict[str, Any], rank: int) -> None:
        super().__init__(config, rank=rank, world_size=1)


class StandaloneWorker:
    """Every PolicyWorker method, but no subclass of a default worker (R2 refuses it)."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        self.config = config

    def is_alive(self) -> bool:
        return True

    def train(self, batch: Any) -> Any:
        raise NotImplementedError

    def get_logprobs(self, batch: Any) -> Any:
        raise NotImplementedError

    def save_checkpoint(self, path: str) -> None:
        raise NotImplementedError

    def load_checkpoint(self, path: str) -> None:
        raise NotImplementedError

    def shutdown(self) -> bool:
        return True
