"""The vLLM worker extension of the quantized generation workers.

Runs inside vLLM's GPU workers (see nemo_rl.models.generation.vllm.vllm_backend):
`modelopt_quantize` applies ModelOpt to the loaded model in place, calibrating
with vLLM's own dummy batches (`execute_dummy_batch`), since the model runs only
under vLLM's forward context there.
"""

from __future__ import annotations

from typing import Any

from contracts.types import QuantizerStats
from nemo_rl.modelopt.quantization import (
    CALIBRATION_BATCHES,
    quantize_model,
    quantizer_stats,
    resolve_quant_cfg,
)
from nemo_rl.models.generation.vllm.vllm_backend import VllmInternalWorkerExtension


class VllmQuantInternalWorkerExtension(VllmInternalWorkerExtension):
    """Adds ModelOpt quantization and quantizer statistics to the vLLM worker."""

    def modelopt_quantize(self, quant_cfg: str) -> QuantizerStats:
        host = self.nemo_rl_host()
        cfg = resolve_quant_cfg(quant_cfg, "policy.generation.quant_cfg")

        def forward_loop(_model: Any) -> None:
            for _ in range(CALIBRATION_BATCHES):
                host.execute_dummy_batch()

        quantize_model(host.model_runner.model, cfg, forward_loop)
        return quantizer_stats(host.model_runner.model)

    def modelopt_quantizer_stats(self) -> QuantizerStats:
        return quantizer_stats(self.nemo_rl_host().model_runner.model)
