"""The vLLM generation worker on the async engine (`vllm_cfg.async_engine: true`).

Builds `AsyncLLMEngine.from_engine_args(AsyncEngineArgs(...))` with the same engine
settings as the sync worker; `generate_async` streams each prompt's sample as soon
as it finishes. vLLM is imported lazily; see vllm_worker for deferred loading.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from contracts.types import GenerationBatch, GenerationSample
from nemo_rl.models.generation.vllm.vllm_worker import (
    GenerationUnavailableError,
    VllmWorkerBase,
    completion_logprobs,
    require_engine_runtime,
    sampling_params,
)

if TYPE_CHECKING:
    from vllm import AsyncLLMEngine, SamplingParams
    from vllm.outputs import RequestOutput

T = TypeVar("T")
# How long a synchronous call into the engine's event loop may take.
SYNC_CALL_TIMEOUT_S = 600.0


class VllmAsyncGenerationWorker(VllmWorkerBase):
    """An async vLLM generation worker; see the module docstring."""

    def __init__(
        self,
        config: dict[str, Any],
        *,
        rank: int,
        world_size: int,
        defer_model_load: bool = False,
    ) -> None:
        super().__init__(config, rank=rank, world_size=world_size)
        self._engine: AsyncLLMEngine | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # The engine binds to a running event loop, which a constructor does not have:
        # without deferral the runtime is checked now and the model loads on the first
        # async call (or an explicit load_model_async).
        self._load_on_first_call = not defer_model_load
        if self._load_on_first_call:
            require_engine_runtime(type(self).__name__)

    async def load_model_async(self) -> None:
        if self._engine is not None:
            return
        require_engine_runtime(type(self).__name__)
        from vllm import AsyncEngineArgs, AsyncLLMEngine

        args = AsyncEngineArgs(**self.settings)
        self._engine = AsyncLLMEngine.from_engine_args(args)
        self._loop = asyncio.get_running_loop()
        await self.after_load_async()

    async def after_load_async(self) -> None:
        """Hook run once the engine exists (quantized workers quantize here)."""

    async def _loaded_engine(self) -> AsyncLLMEngine:
        if self._engine is None and self._load_on_first_call:
            await self.load_model_async()
        return self.engine()

    def engine(self) -> AsyncLLMEngine:
        if self._engine is None:
            raise GenerationUnavailableError(
                f"{type(self).__name__} has no loaded model; await load_model_async() first "
                "(it needs vLLM and a CUDA device)."
            )
        return self._engine

    def run_on_engine_loop(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the engine's event loop from a synchronous method."""
        engine_loop = self._loop
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if engine_loop is None or current is engine_loop:
            coroutine.close()
            raise GenerationUnavailableError(
                f"{type(self).__name__}: a synchronous call needs the engine's event loop "
                "running in another thread"
                + (" (the model is not loaded)" if engine_loop is None else "")
                + "; call it from outside that loop."
            )
        return asyncio.run_coroutine_threadsafe(coroutine, engine_loop).result(SYNC_CALL_TIMEOUT_S)

    async def _final_output(
        self, index: int, prompt: list[int], params: SamplingParams, request_id: str
    ) -> tuple[int, RequestOutput]:
        from vllm.inputs import TokensPrompt

        final: RequestOutput | None = None
        async for output in self.engine().generate(
            TokensPrompt(prompt_token_ids=prompt), params, request_id
        ):
            final = output
        if final is None:
            raise RuntimeError(f"vLLM returned no output for request {request_id}")
        return index, final

    async def generate_async(
        self, batch: GenerationBatch, greedy: bool = False
    ) -> AsyncIterator[GenerationSample]:
        await self._loaded_engine()  # fail before scheduling anything when not loaded
        params = sampling_params(batch, greedy, self.settings["seed"])
        prefix = uuid.uuid4().hex
        tasks = [
            asyncio.ensure_future(self._final_output(i, list(p), params, f"{prefix}-{i}"))
            for i, p in enumerate(batch["prompt_token_ids"])
        ]
        try:
            for finished in asyncio.as_completed(tasks):
                index, output = await finished
                completion = output.outputs[0]
                yield GenerationSample(
                    index=index,
                    output_token_ids=list(completion.token_ids),
                    logprobs=completion_logprobs(completion),
                )
        finally:
            for task in tasks:
                task.cancel()

    async def sleep_async(self) -> None:
        await (await self._loaded_engine()).sleep(level=1)

    async def wake_up_async(self) -> None:
        await (await self._loaded_engine()).wake_up()

    def shutdown(self) -> bool:
        if self._engine is not None:
            self._engine.shutdown()
            self._engine = None
        self._alive = False
        return True
