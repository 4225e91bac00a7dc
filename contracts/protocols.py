"""The worker-extension interface: what Policy and VllmGeneration call on workers.

Methods only: a data member would make runtime isinstance checks fail for
classes that set it in __init__. Every member is fully annotated, so mypy and
pyrefly judge an implementation by the same contract the runtime verifier uses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from contracts.types import (
    EngineArgs,
    GenerationBatch,
    GenerationResult,
    GenerationSample,
    LogprobBatch,
    LogprobResult,
    QuantizerStats,
    TrainBatch,
    TrainResult,
)


@runtime_checkable
class PolicyWorker(Protocol):
    """A training worker: one data-parallel rank of a policy."""

    def is_alive(self) -> bool: ...

    def train(self, batch: TrainBatch) -> TrainResult: ...

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult: ...

    def save_checkpoint(self, path: str) -> None: ...

    def load_checkpoint(self, path: str) -> None: ...

    def shutdown(self) -> bool: ...


@runtime_checkable
class QuantPolicyWorker(PolicyWorker, Protocol):
    """A training worker whose model is fake-quantized by ModelOpt."""

    def get_quantizer_stats(self) -> QuantizerStats: ...


@runtime_checkable
class GenerationWorker(Protocol):
    """A synchronous vLLM generation worker."""

    def is_alive(self) -> bool: ...

    def get_engine_args(self) -> EngineArgs: ...

    def load_model(self) -> None: ...

    def generate(self, batch: GenerationBatch, greedy: bool = False) -> GenerationResult: ...

    def sleep(self) -> None: ...

    def wake_up(self) -> None: ...

    def shutdown(self) -> bool: ...


@runtime_checkable
class AsyncGenerationWorker(Protocol):
    """A vLLM generation worker on the async engine: generation streams samples."""

    def is_alive(self) -> bool: ...

    def get_engine_args(self) -> EngineArgs: ...

    async def load_model_async(self) -> None: ...

    async def generate_async(
        self, batch: GenerationBatch, greedy: bool = False
    ) -> AsyncIterator[GenerationSample]:
        # The yield makes this an async generator, as implementations are.
        raise NotImplementedError
        yield

    async def sleep_async(self) -> None: ...

    async def wake_up_async(self) -> None: ...

    def shutdown(self) -> bool: ...


@runtime_checkable
class QuantGenerationWorker(GenerationWorker, Protocol):
    """A sync generation worker serving a ModelOpt-quantized model."""

    def get_quantizer_stats(self) -> QuantizerStats: ...

    def get_weight_snapshot(self, name: str) -> list[float]: ...


@runtime_checkable
class QuantAsyncGenerationWorker(AsyncGenerationWorker, Protocol):
    """An async generation worker serving a ModelOpt-quantized model."""

    def get_quantizer_stats(self) -> QuantizerStats: ...

    def get_weight_snapshot(self, name: str) -> list[float]: ...


# By name, as the worker registry refers to them.
PROTOCOLS: dict[str, type] = {
    p.__name__: p
    for p in (
        PolicyWorker,
        QuantPolicyWorker,
        GenerationWorker,
        AsyncGenerationWorker,
        QuantGenerationWorker,
        QuantAsyncGenerationWorker,
    )
}
