"""Policy worker extensions with their own Protocols, for the typed-call Ray tests.

`StreamingPolicyWorker` is a real extension (a coroutine and an async-generator method,
under the `StreamingWorker` contract). `NoNormWorker` is a fault injected on purpose:
registered with the template's `WeightNormWorker` contract, it lacks `get_weight_norm`.
Both are registered through an explicit registry (`extension_registry()`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker
from template_project.protocols import WeightNormWorker

from contracts.protocols import PolicyWorker
from nemo_rl_workers.model.registry import DRIVER_ENV, WorkerPlugin, WorkerRegistry, build_registry
from tests.ray.fault_workers import fqn_of


class StreamingWorker(PolicyWorker, Protocol):
    """A policy worker with one coroutine method and one async-generator method."""

    async def rank_async(self, offset: int) -> int: ...

    async def count_up(self, n: int) -> AsyncIterator[int]:
        # The yield makes this an async generator, as implementations are.
        raise NotImplementedError
        yield


class StreamingPolicyWorker(AutomodelPolicyWorker):
    async def rank_async(self, offset: int) -> int:
        await asyncio.sleep(0)
        return self.rank + offset

    async def count_up(self, n: int) -> AsyncIterator[int]:
        for i in range(n):
            await asyncio.sleep(0)
            yield 10 * self.rank + i


class NoNormWorker(AutomodelPolicyWorker):
    """Fault injected on purpose: registered as a WeightNormWorker, without get_weight_norm."""


def extension_registry() -> WorkerRegistry:
    """The built-in table plus both extensions, each with its Protocol."""
    registry = build_registry(entry_points=False)
    registry.add(
        WorkerPlugin(
            environments={fqn_of(StreamingPolicyWorker): DRIVER_ENV,
                          fqn_of(NoNormWorker): DRIVER_ENV},
            protocols={fqn_of(StreamingPolicyWorker): StreamingWorker,
                       fqn_of(NoNormWorker): WeightNormWorker},
        ),
        source="tests.ray.extension_workers",
    )
    return registry
