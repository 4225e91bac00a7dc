"""vLLM workers start deferred without vLLM or a GPU and say clearly what is missing."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
from typing import Any

import pytest
from nemo_rl.modelopt.models.generation.vllm_quant_backend import (
    VllmQuantInternalWorkerExtension,
)
from nemo_rl.modelopt.models.generation.vllm_quant_worker import (
    VllmQuantAsyncGenerationWorker,
    VllmQuantGenerationWorker,
)
from nemo_rl.models.generation.vllm.vllm_backend import VllmInternalWorkerExtension
from nemo_rl.models.generation.vllm.vllm_worker import (
    GenerationUnavailableError,
    VllmGenerationWorker,
)
from nemo_rl.models.generation.vllm.vllm_worker_async import VllmAsyncGenerationWorker

from contracts.types import GenerationBatch
from nemo_rl_workers.errors import WorkerConfigError

BASE_EXT = "nemo_rl.models.generation.vllm.vllm_backend.VllmInternalWorkerExtension"
QUANT_EXT = "nemo_rl.modelopt.models.generation.vllm_quant_backend.VllmQuantInternalWorkerExtension"
WORKERS: list[tuple[type[Any], str, bool]] = [
    (VllmGenerationWorker, BASE_EXT, False),
    (VllmAsyncGenerationWorker, BASE_EXT, False),
    (VllmQuantGenerationWorker, QUANT_EXT, True),
    (VllmQuantAsyncGenerationWorker, QUANT_EXT, True),
]
BATCH: GenerationBatch = {"prompt_token_ids": [[1, 2, 3]], "max_new_tokens": 4}


def _engine_runtime_present() -> bool:
    if importlib.util.find_spec("vllm") is None:
        return False
    import torch

    return torch.cuda.is_available()


needs_no_engine = pytest.mark.skipif(
    _engine_runtime_present(), reason="vLLM and CUDA are present: loading would succeed"
)


def config(**vllm_cfg: object) -> dict[str, Any]:
    return {"backend": "vllm", "model_name": "/models/tiny", "quant_cfg": "FP8_DEFAULT_CFG",
            "vllm_cfg": dict(vllm_cfg)}


@pytest.mark.parametrize(("cls", "extension", "quantized"), WORKERS)
def test_deferred_engine_args_name_the_matching_extension(
    cls: type[Any], extension: str, quantized: bool
) -> None:
    worker = cls(config(), rank=0, world_size=1, defer_model_load=True)
    args = worker.get_engine_args()
    assert args["worker_extension_cls"] == extension
    assert args["model"] == args["tokenizer"] == "/models/tiny"
    # Quantizers inserted after load would be bypassed by CUDA graphs captured before.
    assert args["enforce_eager"] is quantized
    assert worker.is_alive()
    assert worker.shutdown() is True
    assert not worker.is_alive()


def test_engine_args_are_exactly_the_llm_keywords() -> None:
    args = VllmGenerationWorker(
        {**config(tensor_parallel_size=2, gpu_memory_utilization=0.5, max_model_len=512,
                  precision="bfloat16"),
         "seed": 7, "colocated": {"enabled": True}},
        rank=3, world_size=4, defer_model_load=True,
    ).get_engine_args()
    assert args == {
        "model": "/models/tiny",
        "tokenizer": "/models/tiny",
        "dtype": "bfloat16",
        "seed": 10,
        "tensor_parallel_size": 2,
        "gpu_memory_utilization": 0.5,
        "max_model_len": 512,
        "enforce_eager": False,
        "enable_sleep_mode": True,
        "worker_extension_cls": BASE_EXT,
        "load_format": "auto",
        "skip_tokenizer_init": True,
        "trust_remote_code": False,
    }


def test_bad_engine_settings_are_reported_together() -> None:
    with pytest.raises(WorkerConfigError) as caught:
        VllmGenerationWorker(
            {"backend": "vllm", "vllm_cfg": {"tensor_parallel_size": "2", "enforce_eager": 1}},
            rank=0, world_size=1, defer_model_load=True,
        )
    problems = {p.path: p for p in caught.value.problems}
    assert set(problems) == {
        "policy.generation.model_name",
        "policy.generation.vllm_cfg.tensor_parallel_size",
        "policy.generation.vllm_cfg.enforce_eager",
    }
    assert problems["policy.generation.vllm_cfg.tensor_parallel_size"].expected == "an integer"
    assert problems["policy.generation.vllm_cfg.tensor_parallel_size"].given == "2"
    assert problems["policy.generation.vllm_cfg.enforce_eager"].given == "1"


def test_a_precision_vllm_does_not_know_is_a_problem_before_the_engine() -> None:
    with pytest.raises(WorkerConfigError) as caught:
        VllmGenerationWorker(config(precision="bf16"), rank=0, world_size=1,
                             defer_model_load=True)
    (problem,) = caught.value.problems
    assert problem.path == "policy.generation.vllm_cfg.precision"
    assert problem.given == "bf16"
    assert problem.expected == "one of auto, half, float16, bfloat16, float, float32"


@pytest.mark.parametrize(("fqn", "cls"), [(BASE_EXT, VllmInternalWorkerExtension),
                                          (QUANT_EXT, VllmQuantInternalWorkerExtension)])
def test_extension_fqns_import_to_the_extension_classes(fqn: str, cls: type[Any]) -> None:
    module, _, name = fqn.rpartition(".")
    assert getattr(importlib.import_module(module), name) is cls
    assert issubclass(VllmQuantInternalWorkerExtension, VllmInternalWorkerExtension)


@needs_no_engine
@pytest.mark.parametrize("cls", [VllmGenerationWorker, VllmQuantGenerationWorker])
def test_sync_load_says_what_is_missing(cls: type[VllmGenerationWorker]) -> None:
    worker = cls(config(), rank=0, world_size=1, defer_model_load=True)
    with pytest.raises(GenerationUnavailableError, match=f"{cls.__name__} cannot load its model"):
        worker.load_model()
    with pytest.raises(GenerationUnavailableError, match="has no loaded model"):
        worker.generate(BATCH)
    with pytest.raises(GenerationUnavailableError, match="has no loaded model"):
        worker.sleep()
    # Without deferral the constructor itself refuses, with the same reason.
    with pytest.raises(GenerationUnavailableError, match="CUDA|vLLM"):
        cls(config(), rank=0, world_size=1)


@needs_no_engine
@pytest.mark.parametrize("cls", [VllmAsyncGenerationWorker, VllmQuantAsyncGenerationWorker])
def test_async_load_says_what_is_missing(cls: type[VllmAsyncGenerationWorker]) -> None:
    worker = cls(config(), rank=0, world_size=1, defer_model_load=True)

    async def scenario() -> None:
        with pytest.raises(GenerationUnavailableError, match="cannot load its model"):
            await worker.load_model_async()
        with pytest.raises(GenerationUnavailableError, match="has no loaded model"):
            async for _ in worker.generate_async(BATCH):
                pass
        with pytest.raises(GenerationUnavailableError, match="has no loaded model"):
            await worker.wake_up_async()

    asyncio.run(asyncio.wait_for(scenario(), timeout=30))
    with pytest.raises(GenerationUnavailableError, match="CUDA|vLLM"):
        cls(config(), rank=0, world_size=1)


@pytest.mark.parametrize("cls", [VllmQuantGenerationWorker, VllmQuantAsyncGenerationWorker])
def test_quantizer_queries_need_a_loaded_engine(cls: type[Any]) -> None:
    worker = cls(config(), rank=0, world_size=1, defer_model_load=True)
    with pytest.raises(GenerationUnavailableError, match="has no loaded model"):
        worker.get_quantizer_stats()
    with pytest.raises(GenerationUnavailableError, match="has no loaded model"):
        worker.get_weight_snapshot("model.embed_tokens.weight")


@pytest.mark.parametrize("cls", [VllmQuantGenerationWorker, VllmQuantAsyncGenerationWorker])
def test_quant_generation_preflight_checks_quant_cfg(cls: type[Any]) -> None:
    assert cls.preflight(config(), "policy.generation") == []
    [problem] = cls.preflight({"quant_cfg": "FP9_CFG"}, "policy.generation")
    assert (problem.path, problem.given) == ("policy.generation.quant_cfg", "FP9_CFG")
