"""Typed worker calls that must check clean: plain, coroutine and async-generator methods,
sharded and single-rank calls, narrowing, and a group used where a narrower one is asked."""

from __future__ import annotations

from typing import Protocol, assert_type

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
    QuantAsyncGenerationWorker,
    QuantizerStats,
    QuantPolicyWorker,
    TrainBatch,
    TrainResult,
)
from nemo_rl.distributed.worker_groups import RayWorkerGroup


class WeightNormWorker(PolicyWorker, Protocol):
    """An extension's contract, as research/template_project declares it."""

    def get_weight_norm(self) -> float: ...


def policy(group: RayWorkerGroup[PolicyWorker], batches: list[TrainBatch]) -> None:
    assert_type(group.run_sharded(PolicyWorker.train, batches), list[TrainResult])
    assert_type(group.run_rank(0, PolicyWorker.train, batches[0]), TrainResult)
    logprobs = group.run_rank(1, PolicyWorker.get_logprobs, LogprobBatch(input_ids=[[1, 2]]))
    assert_type(logprobs, LogprobResult)
    assert_type(group.run_all(PolicyWorker.save_checkpoint, "ckpt"), list[None])
    assert_type(group.run_all(PolicyWorker.load_checkpoint, path="ckpt"), list[None])
    assert_type(group.run_all(PolicyWorker.is_alive), list[bool])
    quantized = group.narrow(QuantPolicyWorker)
    assert_type(quantized, RayWorkerGroup[QuantPolicyWorker])
    assert_type(quantized.run_all(QuantPolicyWorker.get_quantizer_stats), list[QuantizerStats])
    # A narrowed group still takes the narrower Protocol's methods.
    assert_type(quantized.run_sharded(PolicyWorker.train, batches), list[TrainResult])
    norms = group.narrow(WeightNormWorker).run_all(WeightNormWorker.get_weight_norm)
    assert_type(norms, list[float])


def as_plain_policy(group: RayWorkerGroup[WeightNormWorker]) -> RayWorkerGroup[PolicyWorker]:
    return group  # covariant: a group verified against more serves as one of less


def sync_generation(group: RayWorkerGroup[GenerationWorker], shards: list[GenerationBatch]) -> None:
    assert_type(group.run_rank(0, GenerationWorker.get_engine_args), EngineArgs)
    assert_type(group.run_all(GenerationWorker.load_model), list[None])
    results = group.run_sharded(GenerationWorker.generate, shards, greedy=True)
    assert_type(results, list[GenerationResult])


def async_generation(
    group: RayWorkerGroup[AsyncGenerationWorker], shards: list[GenerationBatch]
) -> None:
    # A coroutine method: its awaited result per worker.
    assert_type(group.run_all(AsyncGenerationWorker.load_model_async), list[None])
    assert_type(group.run_rank(0, AsyncGenerationWorker.sleep_async), None)
    # An async-generator method: the list of its items per worker.
    samples = group.run_sharded(AsyncGenerationWorker.generate_async, shards, True)
    assert_type(samples, list[list[GenerationSample]])
    first = group.run_rank(0, AsyncGenerationWorker.generate_async, shards[0])
    assert_type(first, list[GenerationSample])
    stats = group.narrow(QuantAsyncGenerationWorker).run_rank(
        0, QuantAsyncGenerationWorker.get_quantizer_stats
    )
    assert_type(stats, QuantizerStats)
