from collections.abc import AsyncGenerator

from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.inputs import TokensPrompt
from vllm.outputs import RequestOutput
from vllm.sampling_params import SamplingParams

class AsyncLLMEngine:
    """The async engine (upstream V1: an alias of `vllm.v1.engine.async_llm.AsyncLLM`)."""

    @classmethod
    def from_engine_args(
        cls, engine_args: AsyncEngineArgs, start_engine_loop: bool = True
    ) -> AsyncLLMEngine: ...
    # Upstream is an `async def` with `yield`: calling it returns the generator.
    def generate(
        self, prompt: TokensPrompt, sampling_params: SamplingParams, request_id: str
    ) -> AsyncGenerator[RequestOutput]: ...
    async def sleep(self, level: int = 1) -> None: ...
    async def wake_up(self, tags: list[str] | None = None) -> None: ...
    async def collective_rpc(
        self,
        method: str,
        timeout: float | None = None,
        args: tuple[object, ...] = (),
        kwargs: dict[str, object] | None = None,
    ) -> list[object]: ...
    def shutdown(self) -> None: ...
