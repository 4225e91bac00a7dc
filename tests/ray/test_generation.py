"""VllmGeneration: sync/async from the config, deferred loading without vLLM or CUDA."""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import pytest
import ray
from nemo_rl.distributed.inventory import ray_resources_snapshot
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.generation.vllm.vllm_generation import (
    VllmGeneration,
    vllm_unavailable_reason,
)

from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.reading.loader import load_config
from tests.ray.observed import allocates_nothing, control_start_is_seen

pytestmark = pytest.mark.ray

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
VLLM_ASYNC = "nemo_rl.models.generation.vllm.vllm_worker_async.VllmAsyncGenerationWorker"


def generation_section() -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]["generation"]
    return section


def test_async_engine_selects_the_async_worker_and_defers_without_vllm(
    ray_cluster: None, caplog: pytest.LogCaptureFixture
) -> None:
    reason = vllm_unavailable_reason()
    if reason is None:
        pytest.skip("vLLM and CUDA are present: the engine would really load")
    cluster = RayVirtualCluster([1], use_gpus=False, name="generation")
    config = generation_section()
    config["vllm_cfg"]["async_engine"] = True
    before = ray_resources_snapshot()
    with caplog.at_level(logging.WARNING):
        generation = VllmGeneration(cluster, config, name_prefix="gen_async")
    try:
        assert any(reason in r.getMessage() and "deferred" in r.getMessage()
                   for r in caplog.records)
        assert generation.fqn == VLLM_ASYNC
        assert generation.is_async and generation.deferred
        names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)]
        assert names.count("gen_async-0") == 1
        assert config["worker_extension_cls_fqn"] == VLLM_ASYNC  # committed after start
        engine = generation.get_engine_args()
        assert engine["model"] == "tiny-llama-local"
        with pytest.raises(RuntimeError, match="deferred") as info:
            generation.generate({"prompt_token_ids": [[1, 2, 3]], "max_new_tokens": 2})
        assert VLLM_ASYNC in str(info.value)
    finally:
        generation.shutdown()
        cluster.shutdown()
    assert ray_resources_snapshot() == before


def test_bare_generation_section_is_not_mutated_on_rejection(ray_cluster: None) -> None:
    cluster = RayVirtualCluster([1], use_gpus=False, name="generation-bad")
    config = generation_section()
    config["backend"] = "megatron"
    config["worker_extension_cls_fqn"] = VLLM_ASYNC
    config_before = copy.deepcopy(config)
    try:
        with allocates_nothing(), pytest.raises(WorkerConfigError) as info:
            VllmGeneration(cluster, config, defer_model_load=True)
    finally:
        cluster.shutdown()
    control_start_is_seen(cluster)
    assert config == config_before
    assert info.value.problems[0].rule == "R7"
    assert info.value.path == "policy.generation.worker_extension_cls_fqn"
