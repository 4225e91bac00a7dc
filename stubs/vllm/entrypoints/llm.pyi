from collections.abc import Sequence

from vllm.inputs import TokensPrompt
from vllm.outputs import RequestOutput
from vllm.sampling_params import SamplingParams

class LLM:
    """The offline engine (upstream `vllm.entrypoints.llm.LLM`).

    Upstream takes `**kwargs` and forwards them to `EngineArgs`; the stub lists the
    keywords NeMo-RL passes instead, so a misspelled one fails type checking.
    """

    def __init__(
        self,
        model: str,
        *,
        tokenizer: str | None = None,
        dtype: str = "auto",
        seed: int | None = 0,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        enforce_eager: bool = False,
        enable_sleep_mode: bool = False,
        worker_extension_cls: str = "",
        load_format: str = "auto",
        skip_tokenizer_init: bool = False,
        trust_remote_code: bool = False,
    ) -> None: ...
    def generate(
        self,
        prompts: Sequence[TokensPrompt],
        sampling_params: SamplingParams | None = None,
        *,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]: ...
    def collective_rpc(
        self,
        method: str,
        timeout: float | None = None,
        args: tuple[object, ...] = (),
        kwargs: dict[str, object] | None = None,
    ) -> list[object]: ...
    def sleep(self, level: int = 1) -> None: ...
    def wake_up(self, tags: list[str] | None = None) -> None: ...
