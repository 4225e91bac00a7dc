"""The vLLM surface the generation workers use, as the stubs type it: must check clean."""

from __future__ import annotations

from collections.abc import AsyncIterator

import vllm
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.engine.async_llm_engine import AsyncLLMEngine
from vllm.inputs import TokensPrompt
from vllm.logprobs import FlatLogprobs, Logprob
from vllm.outputs import CompletionOutput, RequestOutput


def build_llm(model: str, extension_fqn: str) -> vllm.LLM:
    return vllm.LLM(
        model,
        tokenizer=None,
        dtype="bfloat16",
        seed=1,
        tensor_parallel_size=1,
        gpu_memory_utilization=0.5,
        max_model_len=128,
        enforce_eager=True,
        enable_sleep_mode=True,
        worker_extension_cls=extension_fqn,
        load_format="dummy",
        skip_tokenizer_init=True,
        trust_remote_code=False,
    )


def generate(llm: vllm.LLM, prompts: list[list[int]]) -> list[list[int]]:
    params = vllm.SamplingParams(
        n=1, temperature=0.0, top_p=1.0, top_k=0, max_tokens=8, logprobs=0, seed=3
    )
    batch = [TokensPrompt(prompt_token_ids=ids) for ids in prompts]
    outputs: list[RequestOutput] = llm.generate(batch, params, use_tqdm=False)
    first: CompletionOutput = outputs[0].outputs[0]
    logprobs: FlatLogprobs | list[dict[int, Logprob]] | None = first.logprobs
    if isinstance(logprobs, list):
        _score: float = logprobs[0][first.token_ids[0]].logprob
    llm.sleep(level=1)
    llm.wake_up()
    _replies: list[object] = llm.collective_rpc("report", args=(1,), kwargs={"k": 2})
    return [list(o.outputs[0].token_ids) for o in outputs]


async def stream(model: str) -> AsyncIterator[list[int]]:
    args = AsyncEngineArgs(model, enable_sleep_mode=True, worker_extension_cls="a.B")
    engine = vllm.AsyncLLMEngine.from_engine_args(args)
    _same: AsyncLLMEngine = engine
    params = vllm.SamplingParams(max_tokens=4)
    async for out in engine.generate(TokensPrompt(prompt_token_ids=[1]), params, "req-0"):
        if out.finished:
            yield list(out.outputs[0].token_ids)
    await engine.sleep(level=1)
    await engine.wake_up()
    _replies: list[object] = await engine.collective_rpc("report", timeout=5.0)
    engine.shutdown()
