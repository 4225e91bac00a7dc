"""A generation worker whose vLLM extension clashes with vLLM's worker is refused by the
pre-allocation check: no actor, no placement group, ever (Ray's record); ours starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from nemo_rl.distributed.verification import clear_verification_cache
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.generation.vllm.vllm_generation import VllmGeneration

from nemo_rl_workers.model.registry import DRIVER_ENV
from nemo_rl_workers.reading.loader import load_config
from tests.ray.fault_workers import fault_registry, fqn_of
from tests.ray.observed import refused_cleanly
from tests.vllm_rule.extensions import (
    ClashingGenerationWorker,
    ClashingSynchronizeExtension,
    PassingGenerationWorker,
)

pytestmark = pytest.mark.ray

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
FIELD = "policy.generation.worker_extension_cls_fqn"


def generation_section(fqn: str) -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]["generation"]
    section["worker_extension_cls_fqn"] = fqn
    return section


def test_a_clashing_vllm_extension_is_refused_before_anything_exists(ray_cluster: None) -> None:
    clear_verification_cache()
    fqn = fqn_of(ClashingGenerationWorker)
    config = generation_section(fqn)
    cluster = RayVirtualCluster([1], use_gpus=False, name="vllm-clash")
    error = refused_cleanly(
        lambda: VllmGeneration(cluster, config, defer_model_load=True,
                               registry=fault_registry({fqn: DRIVER_ENV})),
        config, cluster,
    )
    (problem,) = error.problems
    assert (problem.path, problem.given, problem.rule) == (
        FIELD, fqn_of(ClashingSynchronizeExtension), "vllm-extension-clash"
    )
    assert "synchronize_device clashes with vLLM 0.33.0's vllm.v1.worker.gpu_worker.Worker" in (
        problem.message
    )


def test_a_passing_extension_starts(ray_cluster: None) -> None:
    clear_verification_cache()
    fqn = fqn_of(PassingGenerationWorker)
    cluster = RayVirtualCluster([1], use_gpus=False, name="vllm-no-clash")
    try:
        generation = VllmGeneration(cluster, generation_section(fqn), defer_model_load=True,
                                    name_prefix="gen_noclash",
                                    registry=fault_registry({fqn: DRIVER_ENV}))
        assert generation.fqn == fqn
        assert generation.get_engine_args()["worker_extension_cls"] == (
            "tests.vllm_rule.extensions.PassingExtension"
        )
        generation.shutdown()
    finally:
        cluster.shutdown()
