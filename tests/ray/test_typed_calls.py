"""Typed calls across the actor boundary, on real actors: Protocol method objects in,
typed results out; refusals before any remote call, narrowing, extension Protocols."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nemo_rl.distributed.inventory import ray_resources_snapshot
from nemo_rl.distributed.narrowing import narrowing_checks
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import STRING_CALL_DEPRECATION, WorkerCallError
from nemo_rl.models.policy.lm_policy import Policy

from contracts import ContractError, PolicyWorker, QuantPolicyWorker
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.reading.loader import load_config
from tests.ray.extension_workers import (
    NoNormWorker,
    StreamingPolicyWorker,
    StreamingWorker,
    extension_registry,
)
from tests.ray.fault_workers import fqn_of

pytestmark = pytest.mark.ray

CONFIG = Path(__file__).resolve().parents[2] / "examples" / "configs" / "grpo_tiny.yaml"
AUTOMODEL_DEFAULT = "nemo_rl.models.policy.workers.automodel_policy_worker.AutomodelPolicyWorker"


@pytest.fixture
def cluster(ray_cluster: None) -> Iterator[RayVirtualCluster]:
    cluster = RayVirtualCluster([2], use_gpus=False, name="typed_calls")
    yield cluster
    cluster.shutdown()


def section(fqn: str | None = None) -> dict[str, Any]:
    policy: dict[str, Any] = load_config(CONFIG)["policy"]
    if fqn is not None:
        policy["worker_extension_cls_fqn"] = fqn
    return policy


def test_extension_protocol_missing_its_method_is_refused_before_allocation(
    cluster: RayVirtualCluster,
) -> None:
    before = ray_resources_snapshot()
    config = section(fqn_of(NoNormWorker))
    with pytest.raises(WorkerConfigError) as info:
        Policy(cluster, config, name_prefix="no_norm", registry=extension_registry())
    assert info.value.path == "policy.worker_extension_cls_fqn"
    assert info.value.given == fqn_of(NoNormWorker)
    assert "template_project.protocols.WeightNormWorker" in str(info.value)
    assert "WeightNormWorker.get_weight_norm: missing" in str(info.value)
    # Nothing was allocated, and the config was not touched.
    assert ray_resources_snapshot() == before
    assert config["worker_extension_cls_fqn"] == fqn_of(NoNormWorker)


def test_typed_calls_reach_every_rank_and_refuse_non_members_before_sending(
    cluster: RayVirtualCluster,
) -> None:
    before = ray_resources_snapshot()
    policy = Policy(cluster, section(), name_prefix="typed")
    try:
        group = policy.worker_group
        assert group.run_all(PolicyWorker.is_alive) == [True, True]
        assert group.run_rank(1, PolicyWorker.is_alive) is True
        # Not a member of PolicyWorker: refused in the driver, so the worker (which has no
        # such method) never sees it; the line names the class, the Protocol, the method.
        untyped: Any = group
        with pytest.raises(WorkerCallError) as info:
            untyped.run_all(QuantPolicyWorker.get_quantizer_stats)
        assert str(info.value) == (
            f"{AUTOMODEL_DEFAULT} workers are called as PolicyWorker, which has no method "
            "'get_quantizer_stats'; narrow the group to a Protocol that declares it "
            "(group.narrow(P)) first."
        )
        # Narrowing to a Protocol the class does not implement lists every violation.
        with pytest.raises(ContractError) as failed:
            group.narrow(QuantPolicyWorker)
        assert [v.member for v in failed.value.violations] == ["get_quantizer_stats"]
        # The by-name path still works, flagged as deprecated.
        with pytest.warns(DeprecationWarning, match="calling workers by method name"):
            assert untyped.run_all("is_alive") == [True, True]
        assert STRING_CALL_DEPRECATION.startswith("calling workers by method name")
    finally:
        policy.shutdown()
    assert ray_resources_snapshot() == before


def test_extension_protocol_narrows_without_a_check_and_runs_async_methods(
    cluster: RayVirtualCluster,
) -> None:
    before = ray_resources_snapshot()
    policy = Policy(cluster, section(fqn_of(StreamingPolicyWorker)), name_prefix="streaming",
                    registry=extension_registry())
    try:
        assert policy.plan.resolution.protocol == fqn_of(StreamingWorker)
        checks = narrowing_checks()
        streaming = policy.worker_group.narrow(StreamingWorker)
        assert narrowing_checks() == checks  # verified against it before allocation
        # A coroutine method: each rank's awaited result.
        assert streaming.run_all(StreamingWorker.rank_async, 5) == [5, 6]
        assert streaming.run_rank(1, StreamingWorker.rank_async, offset=1) == 2
        # An async-generator method: each rank's items, as a list.
        assert streaming.run_all(StreamingWorker.count_up, 3) == [[0, 1, 2], [10, 11, 12]]
        assert streaming.run_sharded(StreamingWorker.count_up, [1, 2]) == [[0], [10, 11]]
        # The narrowed view shares the actors; shutting it down shuts the group down.
        streaming.shutdown()
        assert ray_resources_snapshot() == before
    finally:
        policy.shutdown()
    assert ray_resources_snapshot() == before
