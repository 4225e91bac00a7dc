"""Policy workers with faults injected on purpose, for the hardening tests on Ray.

Each subclasses the default Automodel worker, so it passes every check before
allocation and fails only once its actors start. Rank 0 skips building the model
(it only needs to be alive, cheaply); rank 1 carries the fault. They are registered
through an explicit WorkerRegistry (`hardening_registry()`), never in the global table.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker

from nemo_rl_workers.model.registry import ActorEnvironment, WorkerRegistry
from tests.ray.fault_workers import fault_registry, fqn_of

FAULTY_RANK = 1
# Config keys (in the policy section the workers receive) that steer SlowInitWorker.
STARTED_MARKER_KEY = "fault_started_marker"
SLEEP_KEY = "fault_sleep_s"


class _AliveWithoutModel(AutomodelPolicyWorker):
    """Rank 0 of every fault worker: alive, no model (the faults are about rank 1)."""

    def _start_cheaply(self, rank: int, world_size: int) -> None:
        self.rank = rank
        self.world_size = world_size
        self._alive = True
        self.data_parallel = None


class ExitingInitWorker(_AliveWithoutModel):
    """Rank 1's process exits in the middle of `__init__` (as if killed by the OOM killer)."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        if rank == FAULTY_RANK:
            os._exit(3)
        self._start_cheaply(rank, world_size)


class UnpicklableInitError(RuntimeError):
    """An error that cannot cross the process boundary: it holds a lock."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


class UnpicklableErrorInitWorker(_AliveWithoutModel):
    """Rank 1's `__init__` raises an exception that cannot be pickled back to the driver."""

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        if rank == FAULTY_RANK:
            raise UnpicklableInitError("injected fault: rank 1 holds a lock")
        self._start_cheaply(rank, world_size)


class SlowInitWorker(_AliveWithoutModel):
    """Rank 1 writes `config[STARTED_MARKER_KEY]`, then sleeps `config[SLEEP_KEY]` seconds.

    The driver waits for the marker before it interrupts itself, so the interrupt always
    lands while the group is waiting for rank 1 (deterministic, not a race on timing).
    """

    def __init__(self, config: dict[str, Any], *, rank: int, world_size: int) -> None:
        if rank == FAULTY_RANK:
            Path(str(config[STARTED_MARKER_KEY])).write_text(str(os.getpid()))
            time.sleep(float(config[SLEEP_KEY]))
        self._start_cheaply(rank, world_size)


HARDENING_FAULTS = (ExitingInitWorker, UnpicklableErrorInitWorker, SlowInitWorker)
DRIVER = ActorEnvironment(name="driver")


def hardening_registry(extra_envs: Mapping[str, ActorEnvironment] | None = None) -> WorkerRegistry:
    """The built-in table, tests/ray's fault workers and these (in the driver's environment);
    `extra_envs` (FQN -> environment) moves any of them elsewhere."""
    envs = {fqn_of(cls): DRIVER for cls in HARDENING_FAULTS}
    envs.update(extra_envs or {})
    return fault_registry(envs)
