"""vLLM generation workers serving a ModelOpt-quantized model (sync and async).

Once vLLM has loaded the model, each worker asks its engine's GPU workers, through
the quantized extension (vllm_quant_backend), to quantize it with
`generation.quant_cfg`. Without a loaded engine, the quantizer queries raise
GenerationUnavailableError. `preflight` checks `quant_cfg` without any engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contracts.types import QuantizerStats
from nemo_rl.modelopt.quantization import quant_cfg_problems
from nemo_rl.models.generation.vllm.vllm_worker import VllmGenerationWorker
from nemo_rl.models.generation.vllm.vllm_worker_async import VllmAsyncGenerationWorker
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.model.sections import quant_cfg_of

VLLM_QUANT_EXTENSION_FQN = (
    "nemo_rl.modelopt.models.generation.vllm_quant_backend.VllmQuantInternalWorkerExtension"
)
_STATS_KEYS = ("total", "enabled", "with_amax", "positive_amax", "kv_amax")


def first_rank_result(results: list[object], method: str) -> object:
    """The answer of tensor-parallel rank 0 to a collective_rpc call."""
    if not results:
        raise RuntimeError(f"vLLM collective_rpc({method!r}) returned no result")
    return results[0]


def as_quantizer_stats(value: object) -> QuantizerStats:
    if not isinstance(value, Mapping) or not all(
        isinstance(value.get(k), int) for k in _STATS_KEYS
    ):
        raise RuntimeError(f"the vLLM worker returned malformed quantizer stats: {value!r}")
    return QuantizerStats(
        total=int(value["total"]),
        enabled=int(value["enabled"]),
        with_amax=int(value["with_amax"]),
        positive_amax=int(value["positive_amax"]),
        kv_amax=int(value["kv_amax"]),
    )


def as_float_list(value: object) -> list[float]:
    if not isinstance(value, list) or not all(isinstance(v, float | int) for v in value):
        raise RuntimeError(f"the vLLM worker returned a malformed weight snapshot: {value!r}")
    return [float(v) for v in value]


def quant_cfg_name(config: Mapping[str, Any]) -> str:
    value = quant_cfg_of(config)
    return value if isinstance(value, str) else ""


class QuantEngineSettings:
    """What both quantized vLLM workers change: the extension, eager mode, the preflight."""

    extension_fqn = VLLM_QUANT_EXTENSION_FQN
    enforce_eager_default = True

    @classmethod
    def preflight(cls, config: Mapping[str, Any], path: str) -> list[Problem]:
        """Reject an unknown quant_cfg name or recipe before any actor exists."""
        return quant_cfg_problems(quant_cfg_of(config), f"{path}.quant_cfg")


class VllmQuantGenerationWorker(QuantEngineSettings, VllmGenerationWorker):
    """A sync vLLM generation worker whose model ModelOpt quantizes after loading."""

    def after_load(self) -> None:
        self.engine().collective_rpc("modelopt_quantize", args=(quant_cfg_name(self.config),))

    def get_quantizer_stats(self) -> QuantizerStats:
        method = "modelopt_quantizer_stats"
        return as_quantizer_stats(first_rank_result(self.engine().collective_rpc(method), method))

    def get_weight_snapshot(self, name: str) -> list[float]:
        method = "weight_snapshot"
        results = self.engine().collective_rpc(method, args=(name,))
        return as_float_list(first_rank_result(results, method))


class VllmQuantAsyncGenerationWorker(QuantEngineSettings, VllmAsyncGenerationWorker):
    """An async vLLM generation worker whose model ModelOpt quantizes after loading."""

    async def after_load_async(self) -> None:
        await self.engine().collective_rpc(
            "modelopt_quantize", args=(quant_cfg_name(self.config),)
        )

    def get_quantizer_stats(self) -> QuantizerStats:
        method = "modelopt_quantizer_stats"
        results = self.run_on_engine_loop(self.engine().collective_rpc(method))
        return as_quantizer_stats(first_rank_result(results, method))

    def get_weight_snapshot(self, name: str) -> list[float]:
        method = "weight_snapshot"
        results = self.run_on_engine_loop(self.engine().collective_rpc(method, args=(name,)))
        return as_float_list(first_rank_result(results, method))
