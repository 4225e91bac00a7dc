"""The built-in worker table of DESIGN.md, as data.

One row per (role, backend, mode). Upstream module paths and class names are kept,
so FQNs users already write keep working. Extension packages add rows through the
`nemo_rl.workers` entry-point group instead of editing this table.
"""

from __future__ import annotations

from nemo_rl_workers.model.rows import DRIVER_ENV, WorkerRow

BUILTIN_ROWS: tuple[WorkerRow, ...] = (
    WorkerRow(
        role="policy",
        backend="megatron",
        mode=None,
        default_fqn="nemo_rl.models.policy.workers.megatron_policy_worker.MegatronPolicyWorker",
        quantized_fqn=(
            "nemo_rl.modelopt.models.policy.workers.megatron_quant_policy_worker."
            "MegatronQuantPolicyWorker"
        ),
        protocol="PolicyWorker",
        quant_protocol="QuantPolicyWorker",
        env=DRIVER_ENV,
    ),
    WorkerRow(
        role="policy",
        backend="automodel",
        mode=None,
        default_fqn="nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker",
        quantized_fqn=(
            "nemo_rl.modelopt.models.policy.workers.automodel_quant_policy_worker."
            "AutomodelQuantPolicyWorker"
        ),
        protocol="PolicyWorker",
        quant_protocol="QuantPolicyWorker",
        env=DRIVER_ENV,
    ),
    WorkerRow(
        role="generation",
        backend="vllm",
        mode="sync",
        default_fqn="nemo_rl.models.generation.vllm.vllm_worker.VllmGenerationWorker",
        quantized_fqn="nemo_rl.modelopt.models.generation.vllm_quant_worker.VllmQuantGenerationWorker",
        protocol="GenerationWorker",
        quant_protocol="QuantGenerationWorker",
        env=DRIVER_ENV,
    ),
    WorkerRow(
        role="generation",
        backend="vllm",
        mode="async",
        default_fqn="nemo_rl.models.generation.vllm.vllm_worker_async.VllmAsyncGenerationWorker",
        quantized_fqn=(
            "nemo_rl.modelopt.models.generation.vllm_quant_worker.VllmQuantAsyncGenerationWorker"
        ),
        protocol="AsyncGenerationWorker",
        quant_protocol="QuantAsyncGenerationWorker",
        env=DRIVER_ENV,
    ),
)
