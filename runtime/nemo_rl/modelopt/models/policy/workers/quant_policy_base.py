"""The quantization layer both quantized policy workers add to their backend.

The model is fake-quantized by ModelOpt (`mtq.quantize` with `policy.quant_cfg`,
calibrated on seeded random token batches; see nemo_rl.modelopt.quantization)
before the optimizer is created, so every training step runs through the quantizers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch import nn

from contracts.types import QuantizerStats
from nemo_rl.modelopt.quantization import (
    quant_cfg_problems,
    quantize_causal_lm,
    quantizer_stats,
    resolve_quant_cfg,
)
from nemo_rl.models.policy.workers.base_policy_worker import BasePolicyWorker
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.model.sections import quant_cfg_of


class QuantizedPolicyWorkerBase(BasePolicyWorker):
    """Mixed in before a backend worker: `class X(QuantizedPolicyWorkerBase, Backend)`."""

    @classmethod
    def preflight(cls, config: Mapping[str, Any], path: str) -> list[Problem]:
        """Problems with `<path>.quant_cfg`, found without building a model."""
        return quant_cfg_problems(quant_cfg_of(config), f"{path}.quant_cfg")

    def prepare_model(self, model: nn.Module) -> nn.Module:
        cfg = resolve_quant_cfg(quant_cfg_of(self.config), "policy.quant_cfg")
        quantized: nn.Module = quantize_causal_lm(
            model, cfg, self.model_settings["vocab_size"], self.model_settings["seed"]
        )
        return quantized

    def get_quantizer_stats(self) -> QuantizerStats:
        return quantizer_stats(self.model)
