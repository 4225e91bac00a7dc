"""Extension classes, good and bad in each way the contract can be broken.

`differential_expectations.py` holds each class's verdict for the runtime verifier,
mypy and pyrefly; `test_differential.py` checks all three against it. The
assignments at the bottom are what the static checkers judge: each one a checker
rejects carries that checker's marker (cases/README.md), so `make typecheck` checks
the static verdicts as well.

Each case derives from a base that lacks exactly the member under test, so a case
is the one member that differs from a correct worker (no override of a correct one).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Literal

from contracts import (
    AsyncGenerationWorker,
    EngineArgs,
    GenerationBatch,
    GenerationResult,
    GenerationSample,
    GenerationWorker,
    LogprobBatch,
    LogprobResult,
    PolicyWorker,
    QuantizerStats,
    QuantPolicyWorker,
    TrainBatch,
    TrainResult,
)

if TYPE_CHECKING:
    # Visible to type checkers only: at runtime these annotations cannot be resolved.
    from pathlib import Path

    from contracts import GenerationResult as TypeCheckingOnlyResult

_RESULT: TrainResult = {"loss": 0.0, "grad_norm": 0.0, "num_tokens": 0, "step": 0}


# --- Bases: a correct worker minus the member each group of cases varies -------------


class PolicyWithoutSave:
    def is_alive(self) -> bool:
        return True

    def train(self, batch: TrainBatch) -> TrainResult:
        return _RESULT

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        return {"logprobs": []}

    def load_checkpoint(self, path: str) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class PolicyWithoutTrain:
    def is_alive(self) -> bool:
        return True

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        return {"logprobs": []}

    def save_checkpoint(self, path: str) -> None:
        return None

    def load_checkpoint(self, path: str) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class GenerationWithoutGenerate:
    def is_alive(self) -> bool:
        return True

    def get_engine_args(self) -> EngineArgs:
        return {}

    def load_model(self) -> None:
        return None

    def sleep(self) -> None:
        return None

    def wake_up(self) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class AsyncWithoutLoad:
    def is_alive(self) -> bool:
        return True

    def get_engine_args(self) -> EngineArgs:
        return {}

    async def generate_async(
        self, batch: GenerationBatch, greedy: bool = False
    ) -> AsyncIterator[GenerationSample]:
        for index, prompt in enumerate(batch["prompt_token_ids"]):
            yield {"index": index, "output_token_ids": prompt, "logprobs": []}

    async def sleep_async(self) -> None:
        return None

    async def wake_up_async(self) -> None:
        return None

    def shutdown(self) -> bool:
        return True


class AsyncWithoutGenerate:
    def is_alive(self) -> bool:
        return True

    def get_engine_args(self) -> EngineArgs:
        return {}

    async def load_model_async(self) -> None:
        return None

    async def sleep_async(self) -> None:
        return None

    async def wake_up_async(self) -> None:
        return None

    def shutdown(self) -> bool:
        return True


# --- PolicyWorker: save_checkpoint(self, path: str) -> None ---------------------------


class GoodPolicy(PolicyWithoutSave):
    def save_checkpoint(self, path: str) -> None:
        return None


class MissingSave(PolicyWithoutSave):
    pass


class SaveIsString(PolicyWithoutSave):
    save_checkpoint = "checkpoints/"


class SaveIsNone(PolicyWithoutSave):
    save_checkpoint = None


class SaveCallableObject:
    """A callable instance stored on the class: called through an instance it gets no self."""

    def __call__(self, path: str) -> None:
        return None


class SaveIsCallableAttribute(PolicyWithoutSave):
    save_checkpoint = SaveCallableObject()


class SaveStatic(PolicyWithoutSave):
    @staticmethod
    def save_checkpoint(path: str) -> None:
        return None


class SaveClassmethod(PolicyWithoutSave):
    @classmethod
    def save_checkpoint(cls, path: str) -> None:
        return None


class SaveAsync(PolicyWithoutSave):
    async def save_checkpoint(self, path: str) -> None:
        return None


class SaveNoParam(PolicyWithoutSave):
    def save_checkpoint(self) -> None:
        return None


class SaveExtraRequired(PolicyWithoutSave):
    def save_checkpoint(self, path: str, step: int) -> None:
        return None


class SaveExtraOptional(PolicyWithoutSave):
    def save_checkpoint(self, path: str, step: int = 0) -> None:
        return None


class SaveExtraKeywordOnly(PolicyWithoutSave):
    def save_checkpoint(self, path: str, *, step: int) -> None:
        return None


class SaveRenamed(PolicyWithoutSave):
    def save_checkpoint(self, directory: str) -> None:
        return None


class SaveKeywordOnly(PolicyWithoutSave):
    def save_checkpoint(self, *, path: str) -> None:
        return None


class SavePositionalOnly(PolicyWithoutSave):
    def save_checkpoint(self, path: str, /) -> None:
        return None


class SaveStarArgs(PolicyWithoutSave):
    def save_checkpoint(self, *args: str) -> None:
        return None


class SaveStarKwargs(PolicyWithoutSave):
    def save_checkpoint(self, **kwargs: str) -> None:
        return None


class SaveStarArgsKwargs(PolicyWithoutSave):
    def save_checkpoint(self, *args: str, **kwargs: str) -> None:
        return None


class SaveWrongParamType(PolicyWithoutSave):
    def save_checkpoint(self, path: int) -> None:
        return None


class SaveWiderParamType(PolicyWithoutSave):
    def save_checkpoint(self, path: str | os.PathLike[str]) -> None:
        return None


class SaveTypeCheckingOnlyParam(PolicyWithoutSave):
    def save_checkpoint(self, path: Path) -> None:
        return None


class SaveWrongReturn(PolicyWithoutSave):
    def save_checkpoint(self, path: str) -> bool:
        return True


# --- PolicyWorker: train(self, batch: TrainBatch) -> TrainResult ----------------------


class TrainReturnsDict(PolicyWithoutTrain):
    def train(self, batch: TrainBatch) -> dict[str, float]:
        return {"loss": 0.0}


class TrainTakesAny(PolicyWithoutTrain):
    def train(self, batch: Any) -> Any:
        return _RESULT


class TrainTakesLogprobBatch(PolicyWithoutTrain):
    # Parameters are contravariant: every TrainBatch is a LogprobBatch (input_ids).
    def train(self, batch: LogprobBatch) -> TrainResult:
        return _RESULT


class TrainTakesGenerationBatch(PolicyWithoutTrain):
    # A TrainBatch has no max_new_tokens, so it is not a GenerationBatch.
    def train(self, batch: GenerationBatch) -> TrainResult:
        return _RESULT


class TrainReturnsTypeCheckingOnly(PolicyWithoutTrain):
    def train(self, batch: TrainBatch) -> TypeCheckingOnlyResult:
        return {"output_token_ids": [], "logprobs": []}


class NarrowerIsAlive(GoodPolicy):
    # Returns are covariant: Literal[True] is a bool.
    def is_alive(self) -> Literal[True]:
        return True


# --- Base class and constructor (checked at runtime only) -----------------------------


class NotDerivedFromBase(PolicyWithoutSave):
    """Implements the Protocol, but is not a subclass of the required base (GoodPolicy)."""

    def save_checkpoint(self, path: str) -> None:
        return None


class DerivedFromBase(GoodPolicy):
    pass


class InitCannotBind(GoodPolicy):
    """The worker builder calls `Worker(config, rank=..., world_size=...)`."""

    def __init__(self, cfg: dict[str, object]) -> None:
        self.cfg = cfg


class InitBinds(GoodPolicy):
    def __init__(self, config: dict[str, object], *, rank: int, world_size: int) -> None:
        self.config = config
        self.rank = rank
        self.world_size = world_size


# --- QuantPolicyWorker ------------------------------------------------------------------


class QuantMissingStats(GoodPolicy):
    pass


class QuantWithStats(GoodPolicy):
    def get_quantizer_stats(self) -> QuantizerStats:
        return {"total": 0, "enabled": 0, "with_amax": 0, "positive_amax": 0, "kv_amax": 0}


# --- GenerationWorker: generate(self, batch, greedy: bool = False) -> GenerationResult --


class GoodGeneration(GenerationWithoutGenerate):
    def generate(self, batch: GenerationBatch, greedy: bool = False) -> GenerationResult:
        return {"output_token_ids": [], "logprobs": []}


class GenerateGreedyRequired(GenerationWithoutGenerate):
    def generate(self, batch: GenerationBatch, greedy: bool) -> GenerationResult:
        return {"output_token_ids": [], "logprobs": []}


class GenerateWithoutGreedy(GenerationWithoutGenerate):
    def generate(self, batch: GenerationBatch) -> GenerationResult:
        return {"output_token_ids": [], "logprobs": []}


class GenerateGreedyKeywordOnly(GenerationWithoutGenerate):
    def generate(self, batch: GenerationBatch, *, greedy: bool = False) -> GenerationResult:
        return {"output_token_ids": [], "logprobs": []}


class GenerateGreedyRenamed(GenerationWithoutGenerate):
    def generate(self, batch: GenerationBatch, sample: bool = False) -> GenerationResult:
        return {"output_token_ids": [], "logprobs": []}


class GenerateAsync(GenerationWithoutGenerate):
    async def generate(self, batch: GenerationBatch, greedy: bool = False) -> GenerationResult:
        return {"output_token_ids": [], "logprobs": []}


# --- AsyncGenerationWorker ----------------------------------------------------------------


class GoodAsync(AsyncWithoutLoad):
    async def load_model_async(self) -> None:
        return None


class LoadSync(AsyncWithoutLoad):
    def load_model_async(self) -> None:
        return None


class LoadReturnsCoroutine(AsyncWithoutLoad):
    """A plain function returning a coroutine: the same type as `async def`, another kind."""

    def load_model_async(self) -> Coroutine[Any, Any, None]:
        return self._load()

    async def _load(self) -> None:
        return None


class LoadWrongAwaitedType(AsyncWithoutLoad):
    async def load_model_async(self) -> bool:
        return True


class GenerateAsyncCoroutine(AsyncWithoutGenerate):
    """`async def` without `yield`: awaiting it gives an iterator; it is not one."""

    async def generate_async(
        self, batch: GenerationBatch, greedy: bool = False
    ) -> AsyncIterator[GenerationSample]:
        return _samples(batch)


class GenerateAsyncSyncGenerator(AsyncWithoutGenerate):
    def generate_async(
        self, batch: GenerationBatch, greedy: bool = False
    ) -> Iterator[GenerationSample]:
        yield {"index": 0, "output_token_ids": [], "logprobs": []}


async def _samples(batch: GenerationBatch) -> AsyncIterator[GenerationSample]:
    for index, prompt in enumerate(batch["prompt_token_ids"]):
        yield {"index": index, "output_token_ids": prompt, "logprobs": []}


# --- What the static checkers judge -------------------------------------------------------
# One line per case, read by test_differential.py: `_<name>: type[<Protocol>] = <Class>`.

_good_policy: type[PolicyWorker] = GoodPolicy
_missing_save: type[PolicyWorker] = MissingSave  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_is_string: type[PolicyWorker] = SaveIsString  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_is_none: type[PolicyWorker] = SaveIsNone  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_is_callable_attribute: type[PolicyWorker] = SaveIsCallableAttribute  # pyrefly: ignore[bad-assignment]  # expected; mypy is blind here
_save_static: type[PolicyWorker] = SaveStatic
_save_classmethod: type[PolicyWorker] = SaveClassmethod
_save_async: type[PolicyWorker] = SaveAsync  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_no_param: type[PolicyWorker] = SaveNoParam  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_extra_required: type[PolicyWorker] = SaveExtraRequired  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_extra_optional: type[PolicyWorker] = SaveExtraOptional
_save_extra_keyword_only: type[PolicyWorker] = SaveExtraKeywordOnly  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_renamed: type[PolicyWorker] = SaveRenamed  # pyrefly: ignore[bad-assignment]  # expected; mypy is blind here
_save_keyword_only: type[PolicyWorker] = SaveKeywordOnly  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_positional_only: type[PolicyWorker] = SavePositionalOnly  # pyrefly: ignore[bad-assignment]  # expected; mypy is blind here
_save_star_args: type[PolicyWorker] = SaveStarArgs  # pyrefly: ignore[bad-assignment]  # expected; mypy is blind here
_save_star_kwargs: type[PolicyWorker] = SaveStarKwargs  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_star_args_kwargs: type[PolicyWorker] = SaveStarArgsKwargs
_save_wrong_param_type: type[PolicyWorker] = SaveWrongParamType  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_wider_param_type: type[PolicyWorker] = SaveWiderParamType
_save_type_checking_only_param: type[PolicyWorker] = SaveTypeCheckingOnlyParam  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_save_wrong_return: type[PolicyWorker] = SaveWrongReturn  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_train_returns_dict: type[PolicyWorker] = TrainReturnsDict  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_train_takes_any: type[PolicyWorker] = TrainTakesAny
_train_takes_logprob_batch: type[PolicyWorker] = TrainTakesLogprobBatch
_train_takes_generation_batch: type[PolicyWorker] = TrainTakesGenerationBatch  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_train_returns_type_checking_only: type[PolicyWorker] = TrainReturnsTypeCheckingOnly  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_narrower_is_alive: type[PolicyWorker] = NarrowerIsAlive
_not_derived_from_base: type[PolicyWorker] = NotDerivedFromBase
_derived_from_base: type[PolicyWorker] = DerivedFromBase
_init_cannot_bind: type[PolicyWorker] = InitCannotBind
_init_binds: type[PolicyWorker] = InitBinds
_quant_missing_stats: type[QuantPolicyWorker] = QuantMissingStats  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_quant_with_stats: type[QuantPolicyWorker] = QuantWithStats
_good_generation: type[GenerationWorker] = GoodGeneration
_generate_greedy_required: type[GenerationWorker] = GenerateGreedyRequired  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_generate_without_greedy: type[GenerationWorker] = GenerateWithoutGreedy  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_generate_greedy_keyword_only: type[GenerationWorker] = GenerateGreedyKeywordOnly  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_generate_greedy_renamed: type[GenerationWorker] = GenerateGreedyRenamed  # pyrefly: ignore[bad-assignment]  # expected; mypy is blind here
_generate_async: type[GenerationWorker] = GenerateAsync  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_good_async: type[AsyncGenerationWorker] = GoodAsync
_load_sync: type[AsyncGenerationWorker] = LoadSync  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_load_returns_coroutine: type[AsyncGenerationWorker] = LoadReturnsCoroutine
_load_wrong_awaited_type: type[AsyncGenerationWorker] = LoadWrongAwaitedType  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_generate_async_coroutine: type[AsyncGenerationWorker] = GenerateAsyncCoroutine  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
_generate_async_sync_generator: type[AsyncGenerationWorker] = GenerateAsyncSyncGenerator  # type: ignore[assignment]  # pyrefly: ignore[bad-assignment]  # expected
