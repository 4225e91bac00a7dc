"""TypedDicts for the parts of a NeMo-RL config this project reads.

Only the keys the config rules, the resolver and the reference workers read are
declared; real configs carry many more, which pass through untouched.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class MegatronConfig(TypedDict):
    enabled: bool
    tensor_model_parallel_size: NotRequired[int]
    pipeline_model_parallel_size: NotRequired[int]
    context_parallel_size: NotRequired[int]
    fp32_lm_head: NotRequired[bool | None]
    use_fused_linear_logprobs: NotRequired[bool]


class AutomodelConfig(TypedDict):
    enabled: bool
    tensor_parallel_size: NotRequired[int]
    context_parallel_size: NotRequired[int]
    sequence_parallel: NotRequired[bool]


class VllmConfig(TypedDict):
    async_engine: NotRequired[bool]
    tensor_parallel_size: NotRequired[int]
    gpu_memory_utilization: NotRequired[float]
    max_model_len: NotRequired[int]
    fp32_lm_head: NotRequired[bool | None]


class ColocationConfig(TypedDict):
    enabled: bool


class GenerationConfig(TypedDict):
    backend: str
    model_name: NotRequired[str]
    max_new_tokens: NotRequired[int]
    quant_cfg: NotRequired[str | None]
    real_quant: NotRequired[bool]
    worker_extension_cls_fqn: NotRequired[str | None]
    vllm_cfg: NotRequired[VllmConfig]
    colocated: NotRequired[ColocationConfig]
    # Seconds each call to the generation workers may take; None (null): no limit.
    call_timeout_s: NotRequired[float | None]


class TinyModelConfig(TypedDict):
    """The local model config the reference workers build (never downloaded)."""

    vocab_size: NotRequired[int]
    hidden_size: NotRequired[int]
    num_hidden_layers: NotRequired[int]
    num_attention_heads: NotRequired[int]
    intermediate_size: NotRequired[int]
    max_position_embeddings: NotRequired[int]
    seed: NotRequired[int]


class OptimizerConfig(TypedDict):
    lr: NotRequired[float]
    weight_decay: NotRequired[float]


class PolicyConfig(TypedDict):
    model_name: str
    megatron_cfg: NotRequired[MegatronConfig]
    automodel_cfg: NotRequired[AutomodelConfig]
    quant_cfg: NotRequired[str | None]
    worker_extension_cls_fqn: NotRequired[str | None]
    generation: NotRequired[GenerationConfig | None]
    train_micro_batch_size: NotRequired[int]
    logprob_batch_size: NotRequired[int]
    tiny_model: NotRequired[TinyModelConfig]
    optimizer: NotRequired[OptimizerConfig]
    # Seconds each call to the policy workers may take; None (null): no limit.
    call_timeout_s: NotRequired[float | None]


class TeacherConfig(PolicyConfig):
    """A frozen teacher: a policy section that is never trained or quantized."""


class ClusterConfig(TypedDict):
    num_nodes: NotRequired[int]
    gpus_per_node: NotRequired[int]


class MasterConfig(TypedDict):
    policy: PolicyConfig
    teacher: NotRequired[TeacherConfig]
    teachers: NotRequired[list[TeacherConfig]]
    cluster: NotRequired[ClusterConfig]


# A loaded config before it is known to match the schema: plain dicts and lists.
RawConfig = dict[str, Any]
