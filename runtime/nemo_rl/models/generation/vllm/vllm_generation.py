"""VllmGeneration: the driver-side front door of a group of vLLM generation workers.

Sync or async engine follows `vllm_cfg.async_engine` through the resolver. Without vLLM
or CUDA the workers start with model loading deferred (said in a log line), so the
worker selection and contracts can be exercised on CPU; `generate` then refuses clearly.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import TypeForm

from contracts.init_call import GENERATION_INIT
from contracts.protocols import (
    AsyncGenerationWorker,
    GenerationWorker,
    QuantAsyncGenerationWorker,
    QuantGenerationWorker,
)
from contracts.types import (
    EngineArgs,
    GenerationBatch,
    GenerationResult,
    GenerationSample,
    QuantizerStats,
)
from nemo_rl.config.schema import GenerationConfig
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup
from nemo_rl.models.policy.lm_policy import shard_rows
from nemo_rl.pipeline import WorkerPlan, plan_generation
from nemo_rl_workers.model.registry import WorkerRegistry

logger = logging.getLogger(__name__)

G = TypeVar("G")


def vllm_unavailable_reason() -> str | None:
    """Why a real vLLM engine cannot be built here, or None when it can."""
    if importlib.util.find_spec("vllm") is None:
        return "vLLM is not installed"
    import torch

    if not torch.cuda.is_available():
        return "CUDA is not available"
    return None


class VllmGeneration:
    """Generation workers, one per `tensor_parallel_size` bundles of the cluster."""

    def __init__(
        self,
        cluster: RayVirtualCluster,
        config: GenerationConfig | Mapping[str, Any],
        *,
        name_prefix: str = "vllm_gen",
        path: str = "policy.generation",
        defer_model_load: bool | None = None,
        registry: WorkerRegistry | None = None,
        enforce_contracts: bool | None = None,
    ) -> None:
        self.cluster = cluster
        self.name_prefix = name_prefix
        # The config rules and the cluster's fit first: asking whether vLLM can run here
        # imports torch, which a refused start should not wait for.
        self.plan: WorkerPlan = plan_generation(
            config, path=path, world_size=cluster.world_size(), init_call=GENERATION_INIT,
            registry=registry, check_cluster=cluster.check_fit,
        )
        if defer_model_load is None:
            reason = vllm_unavailable_reason()
            defer_model_load = reason is not None
            if reason is not None:
                logger.warning(
                    "%s: %s; starting vLLM generation workers with model loading deferred "
                    "(generate() is unavailable until load_model() succeeds).", name_prefix, reason
                )
        self.deferred = defer_model_load
        self.mode = self.plan.resolution.mode or "sync"
        tp = _tensor_parallel_size(self.plan.section)
        builder = RayWorkerBuilder.from_resolution(
            self.plan.resolution, self.plan.section,
            init_kwargs={"defer_model_load": defer_model_load},
            enforce_contracts=enforce_contracts,
        )
        def start(protocol: TypeForm[G]) -> RayWorkerGroup[G]:
            return RayWorkerGroup(cluster, builder, protocol=protocol, name_prefix=name_prefix,
                                  bundles_per_worker=tp)

        # One of the two, by mode: the sync and async Protocols share no call to type by.
        self._sync: RayWorkerGroup[GenerationWorker] | None = None
        self._async: RayWorkerGroup[AsyncGenerationWorker] | None = None
        self.worker_group: RayWorkerGroup[GenerationWorker] | RayWorkerGroup[AsyncGenerationWorker]
        if self.mode == "async":
            self.worker_group = self._async = start(AsyncGenerationWorker)
        else:
            self.worker_group = self._sync = start(GenerationWorker)
        self.plan.commit()

    @property
    def fqn(self) -> str:
        return self.plan.fqn

    @property
    def is_async(self) -> bool:
        return self.mode == "async"

    def get_engine_args(self) -> EngineArgs:
        """The vLLM engine arguments rank 0 uses (or would use, when deferred)."""
        if self._async is not None:
            return self._async.run_rank(0, AsyncGenerationWorker.get_engine_args)
        return self._sync_group().run_rank(0, GenerationWorker.get_engine_args)

    def load_model(self) -> None:
        """Build the engines now (after a deferred start)."""
        if self._async is not None:
            self._async.run_all(AsyncGenerationWorker.load_model_async)
        else:
            self._sync_group().run_all(GenerationWorker.load_model)
        self.deferred = False

    def generate(self, batch: GenerationBatch, greedy: bool = False) -> GenerationResult:
        """Generate for every prompt; prompts are sharded across workers, results in order."""
        if self.deferred:
            raise RuntimeError(
                f"{self.name_prefix} ({self.fqn}) started with model loading deferred "
                f"({vllm_unavailable_reason() or 'defer_model_load=True'}); call load_model() "
                "on a machine with vLLM and CUDA before generate()."
            )
        prompts = batch["prompt_token_ids"]
        shards = [
            GenerationBatch(prompt_token_ids=s, max_new_tokens=batch["max_new_tokens"])
            for s in shard_rows(prompts, self.worker_group.world_size)
        ]
        if self._async is None:
            results = self._sync_group().run_sharded(GenerationWorker.generate, shards, greedy)
            return GenerationResult(
                output_token_ids=[row for r in results for row in r["output_token_ids"]],
                logprobs=[row for r in results for row in r["logprobs"]],
            )
        per_worker = self._async.run_sharded(AsyncGenerationWorker.generate_async, shards, greedy)
        ordered: list[GenerationSample] = []
        for samples in per_worker:  # each worker yields in completion order
            ordered.extend(sorted(samples, key=lambda s: s["index"]))
        return GenerationResult(
            output_token_ids=[s["output_token_ids"] for s in ordered],
            logprobs=[s["logprobs"] for s in ordered],
        )

    def get_quantizer_stats(self) -> QuantizerStats:
        """ModelOpt quantizer counts of rank 0; the class was verified as quantized (R6)."""
        if self._async is not None:
            quantized_async = self._async.narrow(QuantAsyncGenerationWorker)
            return quantized_async.run_rank(0, QuantAsyncGenerationWorker.get_quantizer_stats)
        quantized = self._sync_group().narrow(QuantGenerationWorker)
        return quantized.run_rank(0, QuantGenerationWorker.get_quantizer_stats)

    def _sync_group(self) -> RayWorkerGroup[GenerationWorker]:
        assert self._sync is not None, "one of the two groups is started"
        return self._sync

    def shutdown(self) -> None:
        self.worker_group.shutdown()


def _tensor_parallel_size(section: Mapping[str, Any]) -> int:
    vllm_cfg = section.get("vllm_cfg")
    tp = vllm_cfg.get("tensor_parallel_size", 1) if isinstance(vllm_cfg, Mapping) else 1
    return tp if isinstance(tp, int) and not isinstance(tp, bool) and tp > 0 else 1
