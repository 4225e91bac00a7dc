"""The Automodel-backend policy worker (`policy.automodel_cfg.enabled: true`).

Reference implementation; not NeMo Automodel: it trains the tiny CPU model of
`base_policy_worker`. As upstream's Automodel (formerly DTensor) path does, it reads
its optimizer from `policy.optimizer` — `kwargs.{lr, weight_decay, betas, eps}` as
upstream writes it, or the same keys directly under `policy.optimizer` — and gradient
clipping from `policy.max_grad_norm`.
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


class AutomodelPolicyWorker(BasePolicyWorker):
    """Reference Automodel policy worker (not NeMo Automodel); see the module docstring."""

    backend_key = "automodel_cfg"

    @classmethod
    def optimizer_settings(cls, config: Mapping[str, Any]) -> OptimizerSettings:
        optimizer = config.get("optimizer")
        block = as_mapping(optimizer)
        path = "policy.optimizer"
        if block is not None and "kwargs" in block:
            optimizer, path = block["kwargs"], "policy.optimizer.kwargs"
        return read_optimizer_settings(
            optimizer, path, max_grad_norm=config.get("max_grad_norm")
        )
