"""Policy: the driver-side front door of a data-parallel group of policy workers.

Construction runs the pre-allocation pipeline (`nemo_rl.pipeline`): config rules, the
resolver and contract verification all pass before one placement group or actor exists.
Then one worker per bundle of the cluster is started; batches are sharded by rows, and
the workers average their gradients every step, so the replicas stay identical.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, overload

from typing_extensions import deprecated

from contracts.init_call import POLICY_INIT
from contracts.protocols import PolicyWorker, QuantPolicyWorker
from contracts.types import (
    LogprobBatch,
    LogprobResult,
    QuantizerStats,
    TrainBatch,
    TrainResult,
)
from nemo_rl.config.schema import PolicyConfig
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup
from nemo_rl.pipeline import WorkerPlan, plan_policy, warn_at_caller
from nemo_rl_workers.errors import Problem, WorkerConfigError, show
from nemo_rl_workers.model.registry import WorkerRegistry
from nemo_rl_workers.reading.origin import problems_located

R0_DEPRECATION = (
    "Policy(worker_extension_cls_fqn=...) is deprecated; set "
    "policy.worker_extension_cls_fqn in the config instead."
)


def shard_rows(rows: list[Any], shards: int) -> list[list[Any]]:
    """Split rows into at most `shards` contiguous, near-equal, non-empty parts, in order."""
    count = min(shards, len(rows))
    size, extra = divmod(len(rows), count) if count else (0, 0)
    parts: list[list[Any]] = []
    start = 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        parts.append(rows[start:end])
        start = end
    return parts


class Policy:
    """A policy trained by `world_size` data-parallel workers (one per cluster bundle)."""

    @overload
    def __init__(
        self,
        cluster: RayVirtualCluster,
        config: PolicyConfig | Mapping[str, Any],
        *,
        name_prefix: str = "lm_policy",
        path: str = "policy",
        registry: WorkerRegistry | None = None,
        enforce_contracts: bool | None = None,
        frozen: bool = False,
    ) -> None: ...

    @overload
    @deprecated(
        "Policy(worker_extension_cls_fqn=...) is deprecated; set "
        "policy.worker_extension_cls_fqn in the config instead."
    )
    def __init__(
        self,
        cluster: RayVirtualCluster,
        config: PolicyConfig | Mapping[str, Any],
        *,
        name_prefix: str = "lm_policy",
        path: str = "policy",
        worker_extension_cls_fqn: str,
        registry: WorkerRegistry | None = None,
        enforce_contracts: bool | None = None,
        frozen: bool = False,
    ) -> None: ...

    def __init__(
        self,
        cluster: RayVirtualCluster,
        config: PolicyConfig | Mapping[str, Any],
        *,
        name_prefix: str = "lm_policy",
        path: str = "policy",
        worker_extension_cls_fqn: str | None = None,
        registry: WorkerRegistry | None = None,
        enforce_contracts: bool | None = None,
        frozen: bool = False,
    ) -> None:
        if worker_extension_cls_fqn is not None:  # R0
            warn_at_caller(R0_DEPRECATION, DeprecationWarning)
        self.cluster = cluster
        self.name_prefix = name_prefix
        self.frozen = frozen
        self.plan: WorkerPlan = plan_policy(
            config,
            path=path,
            world_size=cluster.world_size(),
            init_call=POLICY_INIT,
            constructor_fqn=worker_extension_cls_fqn,
            registry=registry,
            check_cluster=cluster.check_fit,
        )
        builder = RayWorkerBuilder.from_resolution(
            self.plan.resolution, self.plan.section, enforce_contracts=enforce_contracts
        )
        self.worker_group: RayWorkerGroup[PolicyWorker] = RayWorkerGroup(
            cluster, builder, protocol=PolicyWorker, name_prefix=name_prefix,
            num_workers=cluster.world_size(),
        )
        self.plan.commit()

    @classmethod
    def frozen_teacher(
        cls,
        cluster: RayVirtualCluster,
        student_config: PolicyConfig | Mapping[str, Any],
        *,
        teacher_index: int = 0,
        name_prefix: str = "teacher",
        registry: WorkerRegistry | None = None,
    ) -> Policy:
        """A frozen teacher from a student config (R8): its backend's unquantized default."""
        from nemo_rl_workers.model.teacher import derive_teacher_config

        teacher = derive_teacher_config(student_config, teacher_index=teacher_index)
        return cls(cluster, teacher, name_prefix=name_prefix, path=f"teachers[{teacher_index}]",
                   registry=registry, frozen=True)

    @property
    def fqn(self) -> str:
        return self.plan.fqn

    @property
    def world_size(self) -> int:
        return self.worker_group.world_size

    def train(self, batch: TrainBatch) -> TrainResult:
        """One data-parallel step: rows are sharded over the ranks, whose gradients are
        averaged over all tokens, so every replica takes the whole batch's step. The
        loss is the token-weighted mean over the whole batch."""
        if self.frozen:
            raise RuntimeError(
                f"{self.name_prefix} is a frozen teacher ({self.fqn}); it cannot be trained."
            )
        rows = batch["input_ids"]
        if not rows:
            raise ValueError("train batch has no rows; give at least one row of token ids.")
        # Every rank takes part in every step (its gradients are all-reduced with the
        # others'), so a rank beyond the last row gets an empty shard.
        empty: list[list[int]] = []
        id_shards = shard_rows(rows, self.world_size)
        id_shards += [empty] * (self.world_size - len(id_shards))
        shards: list[TrainBatch] = [TrainBatch(input_ids=s) for s in id_shards]
        if "loss_mask" in batch:
            mask_shards = shard_rows(batch["loss_mask"], self.world_size)
            mask_shards += [empty] * (self.world_size - len(mask_shards))
            for shard, mask in zip(shards, mask_shards, strict=True):
                shard["loss_mask"] = mask
        results = self.worker_group.run_sharded(PolicyWorker.train, shards)
        # Each rank reports the global mean (num_tokens is its own share), so weighting by
        # num_tokens gives that mean back; it is also right for ranks that train alone.
        tokens = sum(r["num_tokens"] for r in results)
        if tokens > 0:
            loss = sum(r["loss"] * r["num_tokens"] for r in results) / tokens
        else:
            loss = sum(r["loss"] for r in results) / len(results)
        return TrainResult(
            loss=loss,
            grad_norm=sum(r["grad_norm"] for r in results) / len(results),
            num_tokens=tokens,
            step=max(r["step"] for r in results),
        )

    def get_logprobs(self, batch: LogprobBatch) -> LogprobResult:
        """Per-token log-probabilities, sharded by rows and reassembled in order."""
        rows = shard_rows(batch["input_ids"], self.world_size)
        shards = [LogprobBatch(input_ids=s) for s in rows]
        results = self.worker_group.run_sharded(PolicyWorker.get_logprobs, shards)
        return LogprobResult(logprobs=[row for r in results for row in r["logprobs"]])

    def get_quantizer_stats(self) -> QuantizerStats:
        """ModelOpt quantizer counts, summed over workers; only for a quantized policy."""
        resolution = self.plan.resolution
        if not resolution.quantized:
            with problems_located(self.plan.target, resolution.section):
                raise WorkerConfigError(
                    [Problem(f"{resolution.section}.quant_cfg", "a ModelOpt quant_cfg", show(None),
                             f"get_quantizer_stats() needs a quantized policy, but "
                             f"{resolution.section}.quant_cfg is unset and the workers run "
                             f"{resolution.fqn}; set {resolution.section}.quant_cfg "
                             "(e.g. INT8_DEFAULT_CFG).", rule="R6")]
                )
        quantized = self.worker_group.narrow(QuantPolicyWorker)  # R6 verified it already
        results = quantized.run_all(QuantPolicyWorker.get_quantizer_stats)
        return QuantizerStats(
            total=sum(r["total"] for r in results),
            enabled=sum(r["enabled"] for r in results),
            with_amax=sum(r["with_amax"] for r in results),
            positive_amax=sum(r["positive_amax"] for r in results),
            kv_amax=sum(r["kv_amax"] for r in results),
        )

    def save_checkpoint(self, path: str) -> None:
        """Every rank is called (collective checkpoints); the reference workers write on rank 0."""
        self.worker_group.run_all(PolicyWorker.save_checkpoint, path)

    def load_checkpoint(self, path: str) -> None:
        self.worker_group.run_all(PolicyWorker.load_checkpoint, path)

    def shutdown(self) -> None:
        self.worker_group.shutdown()

    def config(self) -> dict[str, Any]:
        """The section the workers were started with (a copy)."""
        return copy.deepcopy(self.plan.section)
