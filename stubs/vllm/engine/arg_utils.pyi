class AsyncEngineArgs:
    """Arguments of the async engine (upstream: a dataclass deriving from EngineArgs).

    Same keywords as `vllm.LLM`, so one engine-args dict builds either engine.
    """

    model: str
    tokenizer: str | None
    dtype: str
    seed: int | None
    tensor_parallel_size: int
    gpu_memory_utilization: float
    max_model_len: int | None
    enforce_eager: bool
    enable_sleep_mode: bool
    worker_extension_cls: str
    load_format: str
    skip_tokenizer_init: bool
    trust_remote_code: bool
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
