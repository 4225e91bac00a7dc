"""A misspelled `vllm.LLM(...)` keyword must fail type checking, not the GPU job.

Upstream `LLM.__init__` takes `**kwargs` and forwards them to EngineArgs, which
rejects the name only when the engine starts; the stub lists the keywords.
"""

from __future__ import annotations

import vllm
from vllm.engine.arg_utils import AsyncEngineArgs


def build_llm(fqn: str) -> vllm.LLM:
    return vllm.LLM("m", worker_extention_cls=fqn)  # type: ignore[call-arg]  # pyrefly: ignore[unexpected-keyword]  # misspelled keyword


def build_args(fqn: str) -> AsyncEngineArgs:
    return AsyncEngineArgs("m", worker_extension_class=fqn)  # type: ignore[call-arg]  # pyrefly: ignore[unexpected-keyword]  # misspelled keyword


def sampling() -> vllm.SamplingParams:
    return vllm.SamplingParams(1)  # type: ignore[call-arg]  # pyrefly: ignore[bad-argument-count]  # keyword-only

