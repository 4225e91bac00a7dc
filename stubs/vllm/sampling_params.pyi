class SamplingParams:
    """Sampling parameters of a generation request.

    Upstream is a msgspec struct with many more fields; only what NeMo-RL sets is
    listed, keyword-only, so a positional mix-up cannot type-check.
    """

    n: int
    temperature: float
    top_p: float
    top_k: int
    max_tokens: int | None
    logprobs: int | None
    seed: int | None
    def __init__(
        self,
        *,
        n: int = 1,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        max_tokens: int | None = 16,
        logprobs: int | None = None,
        seed: int | None = None,
    ) -> None: ...
