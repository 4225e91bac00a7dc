"""The Megatron-backend policy worker (`policy.megatron_cfg.enabled: true`).

Reference implementation; not Megatron-LM: it trains the tiny CPU model of
`base_policy_worker` and reads this documented subset of the Megatron config:
`policy.megatron_cfg.optimizer.{lr, weight_decay, adam_beta1, adam_beta2, adam_eps,
clip_grad}` (`clip_grad` falls back to `policy.max_grad_norm`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nemo_rl.models.policy.workers.base_policy_worker import (
    BasePolicyWorker,
    OptimizerSettings,
    read_optimizer_settings,
)
from nemo_rl_workers.model.sections import as_mapping


class MegatronPolicyWorker(BasePolicyWorker):
    """Reference Megatron policy worker (not Megatron-LM); see the module docstring."""

    backend_key = "megatron_cfg"

    @classmethod
    def optimizer_settings(cls, config: Mapping[str, Any]) -> OptimizerSettings:
        megatron = as_mapping(config.get(cls.backend_key)) or {}
        optimizer = megatron.get("optimizer")
        block = as_mapping(optimizer) or {}
        if "clip_grad" in block:
            clip, clip_path = block.get("clip_grad"), "policy.megatron_cfg.optimizer.clip_grad"
        else:
            clip, clip_path = config.get("max_grad_norm"), "policy.max_grad_norm"
        return read_optimizer_settings(
            optimizer,
            "policy.megatron_cfg.optimizer",
            max_grad_norm=clip,
            grad_norm_path=clip_path,
        )
