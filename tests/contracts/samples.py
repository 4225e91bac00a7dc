"""Worker classes for the verifier's tests and benchmark: one good, the rest each broken once.

Every broken class differs from `QuantPolicy` in exactly one way, named by its rule.
Module level on purpose: the verifier resolves annotations in the defining module.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from contracts.protocols import QuantPolicyWorker
from contracts.types import (
    EngineArgs,
    GenerationBatch,
    GenerationSample,
    LogprobBatch,
    LogprobResult,
    QuantizerStats,
    TrainBatch,
    TrainResult,
)

if TYPE_CHECKING:  # visible to type checkers only: unresolvable at runtime
    from contracts.types import QuantizerStats as HiddenStats

STATS: QuantizerStats = {"total": 2, "enabled": 2, "with_amax": 2, "positive_amax": 2, "kv_amax": 0}
RESULT: TrainResult = {"loss": 1.0, "grad_norm": 0.5, "num_tokens": 3, "step": 1}


class Policy:
    """Implements PolicyWorker, and takes the builder's constructor call."""

    def __init__(self, config: Mapping[str, object], rank: int = 0, world_size: int = 1) -> None:
        self.config = config
        self.rank = rank

    def is_alive(self) -> bool:
        return True

    def train(self, batch: TrainBatch) -> TrainResult:
        return {**RESULT, "num_tokens": sum(len(row) for row in batch["input_ids"])}

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        return {"logprobs": [[0.0] * len(row) for row in batch["input_ids"]]}

    def save_checkpoint(self, path: str) -> None:
        pass

    def load_checkpoint(self, path: str) -> None:
        pass

    def shutdown(self) -> bool:
        return True


class QuantPolicy(Policy):
    """Implements QuantPolicyWorker."""

    def get_quantizer_stats(self) -> QuantizerStats:
        return STATS


class OtherBase:
    """A base class QuantPolicy does not derive from."""


class StatsNotCallable(Policy):
    get_quantizer_stats = 0


class StaticStats(Policy):
    @staticmethod
    def get_quantizer_stats() -> QuantizerStats:
        return STATS


class AsyncStats(Policy):
    async def get_quantizer_stats(self) -> QuantizerStats:
        return STATS


class StatsWithRequiredArg(Policy):
    def get_quantizer_stats(self, module: str) -> QuantizerStats:
        return STATS


class StatsAsDict(Policy):
    def get_quantizer_stats(self) -> dict[str, int]:
        return {"total": STATS["total"]}


class ClassAlive(QuantPolicy):
    """is_alive as a classmethod: satisfies the instance method (the spec's rule)."""

    @classmethod
    def is_alive(cls) -> bool:
        return True


@runtime_checkable
class MadeByClass(Protocol):
    """Declares a classmethod: an instance method does not satisfy it."""

    @classmethod
    def create(cls) -> int: ...


class InstanceCreate:
    def create(self) -> int:
        return 1


class SubclassForgetsStats(Policy, QuantPolicyWorker):
    """Subclasses the Protocol and forgets a member: inherits its `...` body."""


class NoRankInit(QuantPolicy):
    def __init__(self, config: Mapping[str, object]) -> None:
        super().__init__(config)


class UncheckedStats(Protocol):
    """Not @runtime_checkable: beartype's gate cannot run against it."""

    def get_quantizer_stats(self) -> QuantizerStats: ...


@runtime_checkable
class NamedWorker(Protocol):
    """Has a data member: runtime class checks (the gate) cannot run against it."""

    name: str

    def is_alive(self) -> bool: ...


class FourProblems(Policy):
    """Missing get_quantizer_stats, and three broken PolicyWorker methods."""

    is_alive = True  # type: ignore[assignment]  # not callable: the broken member under test

    async def shutdown(self) -> bool:  # type: ignore[override]  # the broken override under test
        return True

    def save_checkpoint(self, directory: str) -> None:  # pyrefly: ignore[bad-override-param-name]
        pass


class StreamingGeneration:
    """Implements QuantAsyncGenerationWorker; annotates its stream as an AsyncGenerator."""

    def is_alive(self) -> bool:
        return True

    def get_engine_args(self) -> EngineArgs:
        return {"model": "tiny"}

    async def load_model_async(self) -> None:
        pass

    async def generate_async(
        self, batch: GenerationBatch, greedy: bool = False
    ) -> AsyncGenerator[GenerationSample, None]:
        for index, prompt in enumerate(batch["prompt_token_ids"]):
            tokens = [prompt[-1]] * batch["max_new_tokens"]
            yield {"index": index, "output_token_ids": tokens, "logprobs": [0.0] * len(tokens)}

    async def sleep_async(self) -> None:
        pass

    async def wake_up_async(self) -> None:
        pass

    def shutdown(self, *args: object, **kwargs: object) -> bool:
        return True

    def get_quantizer_stats(self) -> QuantizerStats:
        return STATS

    def get_weight_snapshot(self, name: str, limit: int = 8) -> list[float]:
        return [0.0] * limit


class StatsHiddenType(Policy):
    """Its return annotation names a type imported only under TYPE_CHECKING."""

    def get_quantizer_stats(self) -> HiddenStats:
        return STATS
