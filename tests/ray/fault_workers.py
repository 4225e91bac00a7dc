"""Deliberately faulty policy workers, injected on purpose to test rejections.

They are registered through an explicit WorkerRegistry (`fault_registry()`), never by
patching the global table. Each class is broken in exactly one named way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker

from contracts.types import TrainBatch, TrainResult
from nemo_rl_workers.model.registry import (
    DRIVER_ENV,
    ActorEnvironment,
    WorkerPlugin,
    WorkerRegistry,
    build_registry,
)
from tests.ray.light_workers import LightPolicyWorker

MODULE = __name__


class NotASubclassWorker(LightPolicyWorker):
    """Implements every PolicyWorker method, but does not subclass the default worker."""


class MissingMethodWorker:
    """Lacks `get_logprobs` (and is no subclass of the default worker either)."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        self.rank = rank

    def is_alive(self) -> bool:
        return True

    def train(self, batch: TrainBatch) -> TrainResult:
        return TrainResult(loss=0.0, grad_norm=0.0, num_tokens=0, step=0)

    def save_checkpoint(self, path: str) -> None:
        return None

    def load_checkpoint(self, path: str) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class WrongSignatureWorker(AutomodelPolicyWorker):
    """`train` needs a second argument the trainer never passes."""

    def train(self, batch: TrainBatch, scale: float) -> TrainResult:  # type: ignore[override]  # the fault under test
        return super().train(batch)


class BadInitWorker(AutomodelPolicyWorker):
    """The constructor requires `device`, which the worker builder does not pass."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int, device: str) -> None:
        super().__init__(config, rank=rank, world_size=world_size)


class FaultyInitError(RuntimeError):
    """The error FaultyInitWorker raises on rank 1."""


class FaultyInitWorker(AutomodelPolicyWorker):
    """Passes every static check, but its constructor raises on rank 1 (after rank 0 started)."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        if rank == 1:
            raise FaultyInitError("injected fault: rank 1 cannot start")
        # Rank 0 skips building the model: the test only needs it alive, cheaply.
        self.rank = rank
        self.world_size = world_size
        self._alive = True


FAULTY = (
    NotASubclassWorker,
    MissingMethodWorker,
    WrongSignatureWorker,
    BadInitWorker,
    FaultyInitWorker,
)


def fqn_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def fault_registry(extra_envs: Mapping[str, ActorEnvironment] | None = None) -> WorkerRegistry:
    """The built-in table plus the faulty classes (in the driver's environment) and
    `extra_envs` (FQN -> environment)."""
    registry = build_registry(entry_points=False)
    envs = {fqn_of(cls): DRIVER_ENV for cls in FAULTY}
    envs.update(extra_envs or {})
    registry.add(WorkerPlugin(environments=envs), source="tests.ray.fault_workers")
    return registry
