# Stub of the vLLM surface NeMo-RL's generation workers use; see stubs/README.md.
from _typeshed import Incomplete
from vllm.engine.arg_utils import AsyncEngineArgs as AsyncEngineArgs
from vllm.engine.async_llm_engine import AsyncLLMEngine as AsyncLLMEngine
from vllm.entrypoints.llm import LLM as LLM
from vllm.inputs import TokensPrompt as TokensPrompt
from vllm.outputs import CompletionOutput as CompletionOutput
from vllm.outputs import RequestOutput as RequestOutput
from vllm.sampling_params import SamplingParams as SamplingParams

__version__: str

__all__ = [
    "LLM",
    "AsyncEngineArgs",
    "AsyncLLMEngine",
    "CompletionOutput",
    "RequestOutput",
    "SamplingParams",
    "TokensPrompt",
]

# The rest of vLLM's top-level names are not described: they are Any, not errors.
def __getattr__(name: str) -> Incomplete: ...
