"""Real vLLM generation from a tiny model saved locally (needs vLLM and CUDA)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from contracts.types import GenerationBatch


def _engine_runtime_present() -> bool:
    if importlib.util.find_spec("vllm") is None:
        return False
    import torch

    return torch.cuda.is_available()


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.slow,
    pytest.mark.skipif(not _engine_runtime_present(), reason="needs vLLM and a CUDA device"),
]

BATCH: GenerationBatch = {"prompt_token_ids": [[1, 2, 3, 4], [5, 6]], "max_new_tokens": 4}


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The reference workers' tiny Llama, saved as a HF checkpoint vLLM can load."""
    from nemo_rl.models.policy.workers.base_policy_worker import (
        TINY_MODEL_DEFAULTS,
        build_tiny_model,
    )

    path: Path = tmp_path_factory.mktemp("tiny-llama")
    # Head size 64: vLLM's attention kernels support a fixed set of head sizes.
    sizes = {**TINY_MODEL_DEFAULTS, "hidden_size": 128, "num_attention_heads": 2}
    build_tiny_model(sizes).save_pretrained(str(path))
    return str(path)


def gen_config(model_dir: str, **extra: Any) -> dict[str, Any]:
    return {
        "backend": "vllm",
        "model_name": model_dir,
        "vllm_cfg": {"gpu_memory_utilization": 0.2, "max_model_len": 64, "enforce_eager": True,
                     "precision": "bfloat16"},
        **extra,
    }


def test_sync_worker_generates_greedily(tiny_model_dir: str) -> None:
    from nemo_rl.models.generation.vllm.vllm_worker import VllmGenerationWorker

    worker = VllmGenerationWorker(gen_config(tiny_model_dir), rank=0, world_size=1)
    try:
        first = worker.generate(BATCH, greedy=True)
        again = worker.generate(BATCH, greedy=True)
    finally:
        worker.shutdown()
    # Up to max_new_tokens each: a random model may emit its EOS early.
    assert all(1 <= len(t) <= 4 for t in first["output_token_ids"])
    assert [len(v) for v in first["logprobs"]] == [len(t) for t in first["output_token_ids"]]
    assert all(0 <= t < 128 for row in first["output_token_ids"] for t in row)
    assert all(v <= 0.0 for row in first["logprobs"] for v in row)
    assert again["output_token_ids"] == first["output_token_ids"]


def test_async_worker_streams_every_prompt(tiny_model_dir: str) -> None:
    from nemo_rl.models.generation.vllm.vllm_worker_async import VllmAsyncGenerationWorker

    worker = VllmAsyncGenerationWorker(
        gen_config(tiny_model_dir), rank=0, world_size=1, defer_model_load=True
    )

    async def run() -> list[int]:
        await worker.load_model_async()
        return sorted([s["index"] async for s in worker.generate_async(BATCH, greedy=True)])

    try:
        assert asyncio.run(run()) == [0, 1]
    finally:
        worker.shutdown()


def test_quant_worker_quantizes_inside_vllm(tiny_model_dir: str) -> None:
    from nemo_rl.modelopt.models.generation.vllm_quant_worker import VllmQuantGenerationWorker

    worker = VllmQuantGenerationWorker(
        gen_config(tiny_model_dir, quant_cfg="FP8_DEFAULT_CFG"), rank=0, world_size=1
    )
    try:
        stats = worker.get_quantizer_stats()
        result = worker.generate(BATCH, greedy=True)
    finally:
        worker.shutdown()
    assert stats["enabled"] > 0
    assert stats["with_amax"] > 0
    assert all(1 <= len(t) <= 4 for t in result["output_token_ids"])
