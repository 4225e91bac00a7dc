class Logprob:
    """The log-probability of one token (upstream dataclass `vllm.logprobs.Logprob`)."""

    logprob: float
    rank: int | None
    decoded_token: str | None
    def __init__(
        self, logprob: float, rank: int | None = None, decoded_token: str | None = None
    ) -> None: ...
