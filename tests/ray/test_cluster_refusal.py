"""A cluster shape no live node can ever hold is refused at once, before anything is
reserved; one that fits but is busy waits, with progress lines, then says what is missing."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
import ray
from nemo_rl.distributed.verification import clear_verification_cache, verification_report
from nemo_rl.distributed.virtual_cluster import ClusterAllocationError, RayVirtualCluster
from nemo_rl.distributed.worker_groups import RayWorkerGroup
from nemo_rl.models.generation.vllm.vllm_generation import VllmGeneration
from nemo_rl.models.policy.lm_policy import Policy
from ray.util.placement_group import placement_group, remove_placement_group

from contracts.protocols import PolicyWorker
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.reading.loader import load_config
from tests.ray.observed import allocates_nothing, control_start_is_seen, light_builder

pytestmark = pytest.mark.ray

REPO = Path(__file__).resolve().parents[2]


def test_a_group_no_node_can_hold_is_refused_at_once_naming_need_and_largest_node(
    ray_cluster: None,
) -> None:
    cluster = RayVirtualCluster([2], use_gpus=False, cpus_per_bundle=4, name="too_big")
    start = time.monotonic()
    with allocates_nothing(), pytest.raises(ClusterAllocationError) as info:
        RayWorkerGroup(cluster, light_builder(), protocol=PolicyWorker, name_prefix="too_big")
    assert time.monotonic() - start < 1.0
    assert str(info.value) == (
        "cluster too_big can never be placed: node group 0 needs 2 bundles x {CPU: 4} = 8 CPU "
        "on one node; the largest live node has 2 CPU"
    )
    assert info.value.problems == (
        "node group 0 needs 2 bundles x {CPU: 4} = 8 CPU on one node; the largest live node "
        "has 2 CPU",
    )
    control_start_is_seen(RayVirtualCluster([1], use_gpus=False, name="too_big_control"))


def test_a_busy_cluster_waits_with_progress_lines_then_names_what_is_missing(
    ray_cluster: None, caplog: pytest.LogCaptureFixture
) -> None:
    available: Callable[[], Mapping[str, object]] = ray.available_resources
    free = float(str(available().get("CPU", 0.0)))
    blocker = placement_group([{"CPU": free - 0.5}], strategy="STRICT_PACK")
    try:
        ray.get(blocker.ready(), timeout=30)
        cluster = RayVirtualCluster([1], use_gpus=False, cpus_per_bundle=1, name="busy",
                                    ready_timeout_s=3, progress_interval_s=1)
        with caplog.at_level(logging.WARNING, logger="nemo_rl.distributed.virtual_cluster"):
            start = time.monotonic()
            with pytest.raises(ClusterAllocationError) as info:
                RayWorkerGroup(cluster, light_builder(), protocol=PolicyWorker,
                               name_prefix="busy")
            assert time.monotonic() - start < 20
        progress = [r.getMessage() for r in caplog.records if "waiting" in r.getMessage()]
        assert progress, "no progress line while the placement group was pending"
        assert progress[0].startswith("cluster busy: waiting ")
        assert "node group 0 needs 1 bundle x {CPU: 1} = 1 CPU on one node" in progress[0]
        assert str(info.value).startswith(
            "cluster busy: 1 of 1 placement group(s) not ready after 3 s; still missing: node "
            "group 0 needs 1 bundle x {CPU: 1} = 1 CPU on one node; available now: "
        )
        assert not cluster.placement_groups_created  # the pending group was removed
    finally:
        remove_placement_group(blocker)


def test_check_at_the_address_gives_the_verdict_a_real_start_gives(ray_cluster: None) -> None:
    tiny = str(REPO / "examples" / "configs" / "grpo_tiny.yaml")  # 1 node x 2 GPUs
    address = ray.get_runtime_context().gcs_address
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run(
        [sys.executable, "-m", "nemo_rl_workers", "check", tiny, "--no-verify", "--json",
         "--address", address],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=env, check=False,
    )
    assert done.returncode == 1, done.stderr
    [problem] = [p for p in json.loads(done.stdout)["problems"] if p["rule"] == "cluster.fit"]
    with pytest.raises(ClusterAllocationError) as start:
        RayVirtualCluster([2], name="tiny").check_fit()  # the same shape, as Policy starts it
    assert problem["message"] == (
        f"cluster: {start.value.problems[0]} (the cluster at {address})"
    )
    assert start.value.problems[0].endswith("the largest live node has 2 CPU, 0 GPU")


# Issue 29: the fit verdict comes before the worker class is imported or verified.
_FRESH_DRIVER = """
import json, sys, warnings
warnings.simplefilter("ignore")
import ray
from nemo_rl.distributed.virtual_cluster import ClusterAllocationError, RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy
from nemo_rl_workers.reading.loader import load_config

ray.init(address=sys.argv[1], log_to_driver=False)
section = load_config(sys.argv[2])["policy"]
try:
    Policy(RayVirtualCluster([2], use_gpus=False, cpus_per_bundle=4, name="fresh"), section)
    said = "accepted"
except ClusterAllocationError as err:
    said = str(err)
print(json.dumps({"said": said, "imported": sorted(
    m for m in ("torch", "nemo_rl.models.policy.workers.automodel_policy_worker")
    if m in sys.modules)}))
"""


def test_a_fresh_driver_is_refused_before_it_imports_the_worker_class(ray_cluster: None) -> None:
    address = ray.get_runtime_context().gcs_address
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "runtime"),
                                         env.get("PYTHONPATH", "")])
    with allocates_nothing():
        done = subprocess.run(
            [sys.executable, "-c", _FRESH_DRIVER, address,
             str(REPO / "examples" / "configs" / "grpo_tiny.yaml")],
            capture_output=True, text=True, timeout=120, cwd=REPO, env=env, check=False,
        )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {
        "said": "cluster fresh can never be placed: node group 0 needs 2 bundles x {CPU: 4} = "
                "8 CPU on one node; the largest live node has 2 CPU",
        "imported": [],  # neither the worker's module nor torch
    }


@pytest.mark.parametrize("front_door", ["Policy", "VllmGeneration"])
def test_policy_and_generation_refuse_an_impossible_cluster_before_verifying(
    ray_cluster: None, front_door: str
) -> None:
    policy = load_config(REPO / "examples" / "configs" / "grpo_tiny.yaml")["policy"]
    cluster = RayVirtualCluster([2], use_gpus=False, cpus_per_bundle=4, name="no_room")
    clear_verification_cache()
    with allocates_nothing(), pytest.raises(ClusterAllocationError) as info:
        if front_door == "Policy":
            Policy(cluster, policy)
        else:
            VllmGeneration(cluster, policy["generation"], defer_model_load=True)
    assert str(info.value) == (
        "cluster no_room can never be placed: node group 0 needs 2 bundles x {CPU: 4} = 8 CPU "
        "on one node; the largest live node has 2 CPU"
    )
    assert verification_report() == ()  # no contract check, no actors' import check ran
    assert not cluster.placement_groups_created


def test_a_config_problem_still_comes_before_the_cluster(ray_cluster: None) -> None:
    """The pure config rules cost nothing and need no cluster: they are said first."""
    policy = load_config(REPO / "examples" / "configs" / "mismatched_quant.yaml")["policy"]
    cluster = RayVirtualCluster([2], use_gpus=False, cpus_per_bundle=4, name="no_room")
    with allocates_nothing(), pytest.raises(WorkerConfigError) as info:
        Policy(cluster, policy)
    assert [p.rule for p in info.value.problems] == ["R5"]
