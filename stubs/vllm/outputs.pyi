from collections.abc import Sequence

from vllm.logprobs import Logprob

class CompletionOutput:
    """One completion of a request."""

    index: int
    text: str
    token_ids: Sequence[int]
    cumulative_logprob: float | None
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None

class RequestOutput:
    """The outputs of one request: one CompletionOutput per sample (`n`)."""

    request_id: str
    prompt: str | None
    prompt_token_ids: list[int] | None
    outputs: list[CompletionOutput]
    finished: bool
