"""Call-time contracts: wrong arguments or results raise ContractCallError naming the method."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import AsyncGenerator

import pytest

from contracts import (
    CALL_CONTRACTS_ENV,
    AsyncGenerationWorker,
    ContractCallError,
    GenerationBatch,
    GenerationSample,
    PolicyWorker,
    QuantAsyncGenerationWorker,
    QuantPolicyWorker,
    TrainBatch,
    TrainResult,
    call_contracts_enabled,
    check,
    enforce_calls,
)
from tests.contracts import samples

M = "tests.contracts.samples"


class FaultyResultPolicy(samples.QuantPolicy):
    """Fault injected on purpose: results that break the Protocol's types."""

    def train(self, batch: TrainBatch) -> TrainResult:
        if batch.get("loss_mask") == [[9]]:
            return {**samples.RESULT, "loss": "nan"}  # type: ignore[typeddict-item]  # the fault
        return {"loss": 1.0}  # type: ignore[typeddict-item]  # the fault: missing keys

    def shutdown(self) -> bool:
        return 1  # type: ignore[return-value]  # the fault


class FaultyStream(samples.StreamingGeneration):
    """Fault injected on purpose: the second yielded sample lacks its tokens."""

    async def generate_async(
        self, batch: GenerationBatch, greedy: bool = False
    ) -> AsyncGenerator[GenerationSample, None]:
        yield {"index": 0, "output_token_ids": [1], "logprobs": [0.0]}
        yield {"index": 1}  # type: ignore[typeddict-item]  # the fault


def test_good_calls_pass_through() -> None:
    cls = enforce_calls(samples.QuantPolicy, QuantPolicyWorker)
    worker = cls({}, rank=0, world_size=1)
    assert isinstance(worker, samples.QuantPolicy)
    assert worker.train({"input_ids": [[1, 2], [3]]})["num_tokens"] == 3
    assert worker.get_quantizer_stats() == samples.STATS
    assert worker.shutdown() is True


def test_enforced_class_keeps_name_and_still_verifies() -> None:
    cls = enforce_calls(samples.QuantPolicy, QuantPolicyWorker)
    assert cls is not samples.QuantPolicy and issubclass(cls, samples.QuantPolicy)
    assert (cls.__module__, cls.__qualname__) == (M, "QuantPolicy")
    assert check(cls, QuantPolicyWorker).ok
    assert enforce_calls(samples.QuantPolicy, QuantPolicyWorker) is cls  # cached


def test_static_and_class_methods_stay_what_they_are() -> None:
    static = enforce_calls(samples.StaticStats, QuantPolicyWorker)
    assert static.get_quantizer_stats() == samples.STATS  # no instance needed
    assert isinstance(vars(static)["get_quantizer_stats"], staticmethod)
    alive = enforce_calls(samples.ClassAlive, QuantPolicyWorker)
    assert alive.is_alive() is True
    assert isinstance(vars(alive)["is_alive"], classmethod)


class NamedPolicy(samples.QuantPolicy):
    """QuantPolicy with the data member NamedWorker declares."""

    name: str = "policy-0"


def test_data_members_are_left_alone() -> None:
    cls = enforce_calls(NamedPolicy, samples.NamedWorker)
    assert "is_alive" in vars(cls)  # the Protocol's method is wrapped ...
    assert "name" not in vars(cls)  # ... its data member is not: no wrapper, no property
    worker = cls({})
    assert worker.name == "policy-0"
    worker.name = "policy-1"  # a plain attribute: assignment reaches the instance
    assert vars(worker)["name"] == "policy-1"
    assert worker.is_alive() is True


def test_wrong_argument_type() -> None:
    worker = enforce_calls(samples.QuantPolicy, QuantPolicyWorker)({})
    with pytest.raises(ContractCallError) as caught:
        worker.save_checkpoint(3)  # type: ignore[arg-type]  # the wrong call under test
    assert str(caught.value) == (
        f"QuantPolicyWorker.save_checkpoint called on {M}.QuantPolicy: "
        "parameter 'path' = 3 is not str (int 3 not instance of str)"
    )
    with pytest.raises(ContractCallError, match="parameter 'path' = 3 is not str"):
        worker.save_checkpoint(path=3)  # type: ignore[arg-type]  # by keyword too
    assert isinstance(caught.value, TypeError)


def test_typeddict_argument_missing_key() -> None:
    worker = enforce_calls(samples.QuantPolicy, QuantPolicyWorker)({})
    with pytest.raises(ContractCallError) as caught:
        worker.train({"loss_mask": [[1]]})  # type: ignore[typeddict-item]  # missing input_ids
    assert caught.value.detail == (
        "parameter 'batch' = {'loss_mask': [[1]]} is not TrainBatch (missing key(s) 'input_ids')"
    )


def test_wrong_results() -> None:
    worker = enforce_calls(FaultyResultPolicy, PolicyWorker)({})
    prefix = "PolicyWorker.{} called on tests.contracts.test_calltime.FaultyResultPolicy: "
    with pytest.raises(ContractCallError) as caught:
        worker.train({"input_ids": [[1]]})
    assert str(caught.value) == prefix.format("train") + (
        "returned value = {'loss': 1.0} is not TrainResult "
        "(missing key(s) 'grad_norm', 'num_tokens', 'step')"
    )
    with pytest.raises(ContractCallError) as caught:
        worker.train({"input_ids": [[1]], "loss_mask": [[9]]})
    assert caught.value.detail == (
        "returned value is not TrainResult: key 'loss' = 'nan' is not float "
        "(str 'nan' not instance of float)"
    )
    with pytest.raises(ContractCallError) as caught:
        worker.shutdown()
    assert caught.value.detail == "returned value = 1 is not bool (int 1 not instance of bool)"
    assert (caught.value.protocol, caught.value.method) == ("PolicyWorker", "shutdown")


def test_async_methods_and_streams_keep_working() -> None:
    cls = enforce_calls(samples.StreamingGeneration, QuantAsyncGenerationWorker)
    assert check(cls, QuantAsyncGenerationWorker).ok  # still async def / async generators
    worker = cls()

    async def run() -> list[GenerationSample]:
        await worker.load_model_async()
        return [
            s
            async for s in worker.generate_async(
                {"prompt_token_ids": [[5], [6]], "max_new_tokens": 2}
            )
        ]

    assert asyncio.run(run()) == [
        {"index": 0, "output_token_ids": [5, 5], "logprobs": [0.0, 0.0]},
        {"index": 1, "output_token_ids": [6, 6], "logprobs": [0.0, 0.0]},
    ]


def test_stream_checks_each_yielded_item() -> None:
    worker = enforce_calls(FaultyStream, AsyncGenerationWorker)()
    seen: list[GenerationSample] = []

    async def run() -> None:
        async for sample in worker.generate_async({"prompt_token_ids": [[1]], "max_new_tokens": 1}):
            seen.append(sample)

    with pytest.raises(ContractCallError) as caught:
        asyncio.run(run())
    assert len(seen) == 1
    assert caught.value.detail == (
        "yielded value = {'index': 1} is not GenerationSample "
        "(missing key(s) 'output_token_ids', 'logprobs')"
    )


def test_closing_the_stream_closes_the_worker_stream() -> None:
    closed: list[bool] = []

    class Tracked(samples.StreamingGeneration):
        async def generate_async(
            self, batch: GenerationBatch, greedy: bool = False
        ) -> AsyncGenerator[GenerationSample, None]:
            try:
                for index in range(3):
                    yield {"index": index, "output_token_ids": [], "logprobs": []}
            finally:
                closed.append(True)

    worker = enforce_calls(Tracked, AsyncGenerationWorker)()

    async def first_only() -> tuple[int, list[bool]]:
        stream = worker.generate_async({"prompt_token_ids": [[1]], "max_new_tokens": 1})
        first = await anext(stream)
        await stream.aclose()
        return first["index"], list(closed)  # closed now, not later by the garbage collector

    assert asyncio.run(first_only()) == (0, [True])


def test_async_argument_checked_before_running() -> None:
    worker = enforce_calls(samples.StreamingGeneration, AsyncGenerationWorker)()

    async def run() -> None:
        batch: GenerationBatch = {"prompt_token_ids": [[1]], "max_new_tokens": 1}
        async for _ in worker.generate_async(batch, greedy="yes"):  # type: ignore[arg-type]  # wrong
            pass

    with pytest.raises(ContractCallError, match="parameter 'greedy' = 'yes' is not bool"):
        asyncio.run(run())


def test_contract_call_error_pickles() -> None:
    err = ContractCallError("PolicyWorker", "train", "pkg.W", "returned value = 1 is not bool")
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, ContractCallError) and str(again) == str(err)


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        (None, None, False),
        (None, "1", True),
        (None, "true", True),
        (None, "TRUE", True),
        (None, "0", False),
        (None, "yes", False),
        (False, "1", False),
        (True, None, True),
    ],
)
def test_call_contracts_enabled(
    monkeypatch: pytest.MonkeyPatch, flag: bool | None, env: str | None, expected: bool
) -> None:
    if env is None:
        monkeypatch.delenv(CALL_CONTRACTS_ENV, raising=False)
    else:
        monkeypatch.setenv(CALL_CONTRACTS_ENV, env)
    assert call_contracts_enabled(flag) is expected
