"""Extensions whose methods exist but cannot take the calls the contract allows."""

from __future__ import annotations

from contracts import (
    EngineArgs,
    GenerationBatch,
    GenerationResult,
    GenerationWorker,
    LogprobBatch,
    LogprobResult,
    PolicyWorker,
    TrainBatch,
    TrainResult,
)


class PolicyBase:
    def is_alive(self) -> bool:
        return True

    def train(self, batch: TrainBatch) -> TrainResult:
        return {"loss": 0.0, "grad_norm": 0.0, "num_tokens": 0, "step": 0}

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        return {"logprobs": []}

    def save_checkpoint(self, path: str) -> None:
        return None

    def load_checkpoint(self, path: str) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class CheckpointNeedsStep(PolicyBase):
    # An extra required parameter: `save_checkpoint(path)` as Policy calls it fails.
    def save_checkpoint(self, path: str, step: int) -> None:  # type: ignore[override]  # pyrefly: ignore[bad-override]  # the point of the case
        return None


class GenerationBase:
    def is_alive(self) -> bool:
        return True

    def get_engine_args(self) -> EngineArgs:
        return {}

    def load_model(self) -> None:
        return None

    def generate(self, batch: GenerationBatch, greedy: bool = False) -> GenerationResult:
        return {"output_token_ids": [], "logprobs": []}

    def sleep(self) -> None:
        return None

    def wake_up(self) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class GreedyKeywordOnly:
    """Standalone (no base): `generate(batch, True)`, which the contract allows, fails."""

    def is_alive(self) -> bool:
        return True

    def get_engine_args(self) -> EngineArgs:
        return {}

    def load_model(self) -> None:
        return None

    def generate(self, batch: GenerationBatch, *, greedy: bool = False) -> GenerationResult:
        return {"output_token_ids": [], "logprobs": []}

    def sleep(self) -> None:
        return None

    def wake_up(self) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class GenerateReturnsList(GenerationBase):
    # Wrong return type: the driver indexes the result as a GenerationResult.
    def generate(self, batch: GenerationBatch, greedy: bool = False) -> list[list[int]]:  # type: ignore[override]  # pyrefly: ignore[bad-override]  # the point of the case
        return []


_extra_param: type[PolicyWorker] = CheckpointNeedsStep  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # save_checkpoint needs `step`
_keyword_only: type[GenerationWorker] = GreedyKeywordOnly  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # `greedy` keyword-only
_bad_return: type[GenerationWorker] = GenerateReturnsList  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # returns a list
_fine: type[GenerationWorker] = GenerationBase
