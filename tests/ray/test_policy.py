"""Accepted configs: the expected actors start, a quantized policy trains, and a failed
start leaves nothing behind."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from nemo_rl.distributed.inventory import (
    live_placement_group_count,
    named_actor_count,
    ray_resources_snapshot,
)
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import WorkerStartupError
from nemo_rl.models.policy.lm_policy import Policy

from contracts.calltime import ContractCallError
from contracts.protocols import PolicyWorker
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.resolver import quant_auto_warning
from nemo_rl_workers.reading.loader import load_config
from tests.ray.fault_workers import FaultyInitWorker, fault_registry, fqn_of

pytestmark = pytest.mark.ray

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
AUTOMODEL_DEFAULT = (
    "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"
)
AUTOMODEL_QUANT = (
    "nemo_rl.modelopt.models.policy.workers.automodel_quant_policy_worker."
    "AutomodelQuantPolicyWorker"
)
BATCH: dict[str, list[list[int]]] = {
    "input_ids": [[1, 2, 3, 4, 5], [3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [1, 1, 2]]
}


def policy_section(name: str) -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIGS / name)["policy"]
    return section


def own_actors(prefix: str) -> list[str]:
    return sorted(
        a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
        if a["name"].startswith(f"{prefix}-")
    )


@pytest.fixture(scope="module")
def quantized(ray_cluster: None) -> Iterator[tuple[Policy, dict[str, Any], list[str], int]]:
    """An INT8 Policy on 1 node x 2 CPU bundles, started once for this module."""
    cluster = RayVirtualCluster([2], use_gpus=False, name="quantized")
    config = policy_section("grpo_tiny_int8.yaml")
    pgs_before = live_placement_group_count()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        policy = Policy(cluster, config, name_prefix="int8_policy")
    r3 = [w for w in caught if str(w.message) == quant_auto_warning(AUTOMODEL_QUANT)]
    names = own_actors("int8_policy")
    new_pgs = live_placement_group_count() - pgs_before
    assert len(r3) == 1 and r3[0].filename == __file__  # at the user's line
    yield policy, config, names, new_pgs
    policy.shutdown()
    cluster.shutdown()


def test_accepted_config_starts_one_actor_per_bundle(
    quantized: tuple[Policy, dict[str, Any], list[str], int],
) -> None:
    policy, config, names, new_pgs = quantized
    assert names == ["int8_policy-0", "int8_policy-1"]
    assert new_pgs == 1  # one placement group for the one node
    assert policy.fqn == AUTOMODEL_QUANT
    # R3: written back only after success, so resolving the same config again is silent.
    assert config["worker_extension_cls_fqn"] == AUTOMODEL_QUANT


def test_quantized_policy_trains_and_reports_quantizers(
    quantized: tuple[Policy, dict[str, Any], list[str], int],
) -> None:
    policy = quantized[0]
    first = policy.train({"input_ids": BATCH["input_ids"]})
    second = policy.train({"input_ids": BATCH["input_ids"]})
    assert first["num_tokens"] == 14  # 4+3+5+2 predicted tokens, over both ranks
    assert second["step"] == first["step"] + 1
    assert second["loss"] < first["loss"]
    stats = policy.get_quantizer_stats()
    assert stats["enabled"] > 0
    assert stats["with_amax"] > 0


def test_logprobs_are_reassembled_in_order(
    quantized: tuple[Policy, dict[str, Any], list[str], int],
) -> None:
    rows = [[1, 2, 3], [4, 5], [6, 7, 8, 9]]
    result = quantized[0].get_logprobs({"input_ids": rows})
    assert [len(r) for r in result["logprobs"]] == [3, 2, 4]
    assert all(r[0] == 0.0 for r in result["logprobs"])


def test_deprecated_argument_works_with_a_warning(ray_cluster: None) -> None:
    cluster = RayVirtualCluster([1], use_gpus=False, name="deprecated")
    config = policy_section("grpo_tiny.yaml")
    before = ray_resources_snapshot()
    with pytest.warns(DeprecationWarning, match="worker_extension_cls_fqn") as record:
        policy = Policy(  # type: ignore[deprecated]  # R0 under test
            cluster, config, name_prefix="dep_policy", enforce_contracts=True,
            worker_extension_cls_fqn=AUTOMODEL_DEFAULT,
        )
    try:
        ours = [w for w in record if "Policy(worker_extension_cls_fqn" in str(w.message)]
        assert [w.filename for w in ours] == [__file__]
        assert own_actors("dep_policy") == ["dep_policy-0"]
        assert policy.fqn == AUTOMODEL_DEFAULT
        assert config["worker_extension_cls_fqn"] == AUTOMODEL_DEFAULT
        with pytest.raises(WorkerConfigError, match="quant_cfg") as info:
            policy.get_quantizer_stats()
        assert info.value.path == "policy.quant_cfg"
        assert AUTOMODEL_DEFAULT in str(info.value)
        # Call-time contracts are on inside this actor: a mistyped batch names the method.
        with pytest.raises(ContractCallError, match="PolicyWorker.get_logprobs"):
            not_rows: Any = {"input_ids": "not rows"}  # mistyped on purpose, past the checkers
            policy.worker_group.run_rank(0, PolicyWorker.get_logprobs, not_rows)
    finally:
        policy.shutdown()
        cluster.shutdown()
    assert ray_resources_snapshot() == before


def test_raising_init_on_one_rank_leaves_nothing_behind(ray_cluster: None) -> None:
    cluster = RayVirtualCluster([2], use_gpus=False, name="faulty")
    config = policy_section("grpo_tiny.yaml")
    fqn = fqn_of(FaultyInitWorker)
    config["worker_extension_cls_fqn"] = fqn
    config_before = copy.deepcopy(config)
    before = ray_resources_snapshot()
    try:
        with pytest.raises(WorkerStartupError) as info:
            Policy(cluster, config, name_prefix="faulty", registry=fault_registry())
    finally:
        cluster.shutdown()
    assert ray_resources_snapshot() == before
    assert named_actor_count() == before[0]
    assert config == config_before  # not committed: the start failed
    assert fqn in str(info.value)
    assert info.value.rank == 1
    assert "injected fault: rank 1 cannot start" in str(info.value)
    assert type(info.value.__cause__).__name__ == "FaultyInitError"


def test_frozen_teacher_runs_the_unquantized_default(ray_cluster: None) -> None:
    cluster = RayVirtualCluster([1], use_gpus=False, name="teacher")
    student = policy_section("grpo_tiny_int8.yaml")
    student_before = copy.deepcopy(student)
    with pytest.warns(UserWarning, match="quant_cfg"):
        teacher = Policy.frozen_teacher(cluster, student, teacher_index=0)
    try:
        assert teacher.fqn == AUTOMODEL_DEFAULT
        assert student == student_before
        assert own_actors("teacher") == ["teacher-0"]
        with pytest.raises(RuntimeError, match="frozen teacher"):
            teacher.train({"input_ids": BATCH["input_ids"]})
        logprobs = teacher.get_logprobs({"input_ids": [[1, 2, 3]]})
        assert len(logprobs["logprobs"][0]) == 3
    finally:
        teacher.shutdown()
        cluster.shutdown()
