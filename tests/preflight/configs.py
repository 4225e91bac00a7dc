"""Small preflight configs: one valid base, built fresh per test, and edits that break it."""

from __future__ import annotations

import copy
from typing import Any

WORLD_SIZE = 8
NEMOTRON_H = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"

_BASE: dict[str, Any] = {
    "policy": {
        "model_name": NEMOTRON_H,
        "train_micro_batch_size": 2,
        "logprob_batch_size": 2,
        "megatron_cfg": {
            "enabled": True,
            "tensor_model_parallel_size": 2,
            "pipeline_model_parallel_size": 1,
            "context_parallel_size": 1,
            "fp32_lm_head": False,
            "use_fused_linear_logprobs": False,
        },
        "automodel_cfg": {"enabled": False, "tensor_parallel_size": 1, "context_parallel_size": 1},
        "draft": {"enabled": False, "model_name": None},
        "sequence_packing": {"enabled": False},
        "dynamic_batching": {"enabled": False},
        "generation": {
            "backend": "vllm",
            "model_name": NEMOTRON_H,
            "vllm_cfg": {"async_engine": False, "tensor_parallel_size": 1, "fp32_lm_head": False},
        },
    },
    "loss_fn": {"force_on_policy_ratio": False},
    "cluster": {"num_nodes": 1, "gpus_per_node": WORLD_SIZE},
}


def base_config() -> dict[str, Any]:
    """A valid Megatron + vLLM config for a world size of WORLD_SIZE; a fresh deep copy."""
    return copy.deepcopy(_BASE)


def set_at(config: dict[str, Any], dotted: str, value: object) -> dict[str, Any]:
    """Set `dotted` (creating mappings on the way) and return the config, for one-line edits."""
    *parents, last = dotted.split(".")
    node = config
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return config


def edited(*edits: tuple[str, object]) -> dict[str, Any]:
    """The base config with each (dotted path, value) applied in order."""
    config = base_config()
    for dotted, value in edits:
        set_at(config, dotted, value)
    return config


AUTOMODEL: tuple[tuple[str, object], ...] = (
    ("policy.megatron_cfg.enabled", False),
    ("policy.automodel_cfg.enabled", True),
)
