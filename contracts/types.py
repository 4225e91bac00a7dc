"""The data that crosses the boundary between the driver and its workers.

Plain lists and numbers only, so batches are cheap to send through Ray and the
contracts stay free of torch.
"""

from typing import NotRequired, TypedDict


class TrainBatch(TypedDict):
    """Token sequences for one training step (each row may have its own length)."""

    input_ids: list[list[int]]
    loss_mask: NotRequired[list[list[int]]]


class TrainResult(TypedDict):
    loss: float
    grad_norm: float
    num_tokens: int
    step: int


class LogprobBatch(TypedDict):
    input_ids: list[list[int]]


class LogprobResult(TypedDict):
    """Per-token log-probabilities; position 0 of each row is 0.0 (no prediction)."""

    logprobs: list[list[float]]


class QuantizerStats(TypedDict):
    """Counts over the ModelOpt quantizer modules of a quantized model."""

    total: int
    enabled: int
    with_amax: int
    positive_amax: int
    kv_amax: int


class GenerationBatch(TypedDict):
    prompt_token_ids: list[list[int]]
    max_new_tokens: int


class GenerationResult(TypedDict):
    output_token_ids: list[list[int]]
    logprobs: list[list[float]]


class GenerationSample(TypedDict):
    """One finished prompt of an async generation, in completion order."""

    index: int
    output_token_ids: list[int]
    logprobs: list[float]


EngineArgs = dict[str, object]
