"""Worker groups on a cluster of three nodes: layout, verification where the actors run,
rendezvous per node, refusal and a node lost during start-up leaving nothing behind."""

from __future__ import annotations

import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import ray
from nemo_rl.distributed.inventory import ray_resources_snapshot
from nemo_rl.distributed.verification import clear_verification_cache, verification_runs
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster, bundle_node_id
from nemo_rl.distributed.worker_groups import RayWorkerBuilder, RayWorkerGroup, WorkerStartupError

from contracts.protocols import PolicyWorker
from contracts.types import LogprobBatch, TrainBatch
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import (
    DRIVER_ENV,
    ActorEnvironment,
    WorkerPlugin,
    build_registry,
)
from nemo_rl_workers.model.resolver import FIELD, resolve_policy
from nemo_rl_workers.reading.loader import load_config

from .conftest import GPUS_PER_NODE, REPO_ROOT, ThreeNodes
from .protocols import NodeReportingWorker
from .workers import HELD_FROM_RANK

pytestmark = pytest.mark.cluster

CONFIG = Path(REPO_ROOT) / "examples" / "configs" / "grpo_tiny.yaml"
WORKERS = "tests.cluster.workers"
REPORTING = f"{WORKERS}.NodeReportingPolicyWorker"
HELD = f"{WORKERS}.HeldStartPolicyWorker"
BROKEN = "broken_extension.BrokenPolicyWorker"  # docs/examples: save_checkpoint drifted
ROWS = [[5, 6, 7, 8, 9], [11, 12, 13], [1, 2, 3, 4], [7, 8, 9, 10, 11]]


def gpu_cluster(name: str, per_node: list[int]) -> RayVirtualCluster:
    return RayVirtualCluster(per_node, use_gpus=True, num_gpus_per_node=GPUS_PER_NODE,
                             cpus_per_bundle=0.01, name=name, ready_timeout_s=60)


def policy_section(fqn: str | None = None) -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIG)["policy"]
    section.pop("generation", None)
    if fqn is not None:
        section[FIELD] = fqn
    return section


def builder(fqn: str, env: ActorEnvironment = DRIVER_ENV) -> RayWorkerBuilder:
    """Resolved (R2) through a registry that registers `fqn` in `env`."""
    registry = build_registry(entry_points=False)
    protocols: dict[str, type] = {fqn: NodeReportingWorker} if fqn == REPORTING else {}
    registry.add(WorkerPlugin(environments={fqn: env}, protocols=protocols),
                 source="tests.cluster")
    section = policy_section(fqn)
    resolution = resolve_policy(section, registry=registry)
    return RayWorkerBuilder.from_resolution(resolution, section)


def worker_node_env(tmp_path: Path) -> tuple[ActorEnvironment, Path]:
    """An environment installed on the worker nodes only: its interpreter refuses to start
    on the head node, and logs the node of every process it starts."""
    log = tmp_path / "env-starts.log"
    script = tmp_path / "worker-env-python"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$NEMO_TEST_NODE" >> {log}\n'
        'if [ "$NEMO_TEST_NODE" = head ]; then\n'
        '  echo "this environment is not installed on the head node" >&2; exit 127\n'
        "fi\n"
        f'PYTHONPATH={REPO_ROOT}:{REPO_ROOT}/docs/examples${{PYTHONPATH:+:$PYTHONPATH}} '
        f'exec {sys.executable} "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return ActorEnvironment("worker-nodes-env", str(script)), log


def node_ip(node_id: str) -> str:
    node = next(n for n in ray.nodes() if n["NodeID"] == node_id)  # type: ignore[no-untyped-call]  # ray: unannotated
    return str(node["NodeManagerAddress"])


def assert_nothing_left(before: tuple[int, int]) -> None:
    deadline = time.monotonic() + 20
    while ray_resources_snapshot() != before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray_resources_snapshot() == before


def test_bundles_node_by_node_ranks_on_their_bundles_and_one_rendezvous(
    three_nodes: ThreeNodes,
) -> None:
    before = ray_resources_snapshot()
    cluster = gpu_cluster("span", [GPUS_PER_NODE, GPUS_PER_NODE])
    group = RayWorkerGroup(cluster, builder(REPORTING), protocol=NodeReportingWorker,
                           name_prefix="span")
    try:
        bundles = [bundle_node_id(pg, b) for pg, b in cluster.bundle_locations()]
        # One placement group per node, each holding that node's bundles (upstream's layout).
        assert bundles[0] == bundles[1] != bundles[2] == bundles[3]
        assert set(bundles) == set(three_nodes.worker_ids.values())
        where = group.run_all(NodeReportingWorker.where)
        assert [w["node_id"] for w in where] == bundles  # rank r runs on bundle r's node
        tags = {three_nodes.worker_ids[w["node_tag"]] for w in where}
        assert tags == set(bundles)
        # Ranks on two nodes meet at rank 0's node, by its address, never loopback.
        assert {(w["master_addr"], w["master_port"]) for w in where} == {
            (node_ip(bundles[0]), where[0]["master_port"])
        }
        assert where[0]["master_addr"] != "127.0.0.1"
        # The data-parallel group really forms across the nodes: one step, ranks agree.
        shards: list[TrainBatch] = [{"input_ids": [row]} for row in ROWS]
        results = group.run_sharded(PolicyWorker.train, shards)
        assert len({round(r["loss"], 6) for r in results}) == 1
        probe: LogprobBatch = {"input_ids": [[1, 2, 3, 4, 5]]}
        logprobs = [
            group.run_rank(r, PolicyWorker.get_logprobs, probe)["logprobs"][0] for r in range(4)
        ]
        assert all(lp == pytest.approx(logprobs[0], abs=1e-5) for lp in logprobs)
    finally:
        group.shutdown()
    assert_nothing_left(before)


def test_a_group_on_one_remote_node_meets_on_that_nodes_loopback(
    three_nodes: ThreeNodes,
) -> None:
    before = ray_resources_snapshot()
    cluster = gpu_cluster("one-node", [GPUS_PER_NODE])
    group = RayWorkerGroup(cluster, builder(REPORTING), protocol=NodeReportingWorker,
                           name_prefix="one-node")
    try:
        where = group.run_all(NodeReportingWorker.where)
        assert len({w["node_id"] for w in where}) == 1
        assert where[0]["node_id"] in three_nodes.worker_ids.values()  # not the driver's
        assert {w["master_addr"] for w in where} == {"127.0.0.1"}
    finally:
        group.shutdown()
    assert_nothing_left(before)


def test_verification_runs_in_the_workers_environment_on_a_worker_node(
    three_nodes: ThreeNodes, tmp_path: Path
) -> None:
    env, log = worker_node_env(tmp_path)
    clear_verification_cache()
    before = ray_resources_snapshot()
    cluster = gpu_cluster("env", [1, 1])
    group = RayWorkerGroup(cluster, builder(REPORTING, env), protocol=NodeReportingWorker,
                           name_prefix="env")
    try:
        assert verification_runs() == 1
        assert len(group.run_all(NodeReportingWorker.where)) == 2
        # Every process of the environment (the check's, then one per actor) started on a
        # worker node: on the head it would have refused to start.
        starts = log.read_text().split()
        assert len(starts) >= 3 and set(starts) <= {"w1", "w2"}
    finally:
        group.shutdown()
    assert_nothing_left(before)


def test_a_refused_class_leaves_nothing_on_any_node(
    three_nodes: ThreeNodes, tmp_path: Path
) -> None:
    env, log = worker_node_env(tmp_path)
    clear_verification_cache()
    before = ray_resources_snapshot()
    cluster = gpu_cluster("refused", [GPUS_PER_NODE, GPUS_PER_NODE])
    with pytest.raises(WorkerConfigError) as caught:
        RayWorkerGroup(cluster, builder(BROKEN, env), protocol=PolicyWorker,
                       name_prefix="refused")
    problems = caught.value.problems
    assert {(p.path, p.given) for p in problems} == {(f"policy.{FIELD}", BROKEN)}
    assert any("save_checkpoint" in p.message for p in problems)
    assert not cluster.placement_groups_created
    assert ray_resources_snapshot() == before
    # The refusal came from the environment itself, started on a worker node.
    starts = log.read_text().split()
    assert starts and set(starts) <= {"w1", "w2"}
    assert ray.util.list_named_actors(all_namespaces=True) == []


def test_a_node_lost_during_startup_is_named_with_the_rank_and_nothing_is_left(
    three_nodes: ThreeNodes,
) -> None:
    # Last in this module: it takes a node away.
    before = ray_resources_snapshot()
    cluster = gpu_cluster("lost", [GPUS_PER_NODE, GPUS_PER_NODE])
    victim: dict[str, str] = {}

    def remove_the_held_ranks_node() -> None:
        deadline = time.monotonic() + 120
        name = f"lost-{HELD_FROM_RANK}"
        while time.monotonic() < deadline:
            if any(a["name"] == name for a in ray.util.list_named_actors(all_namespaces=True)):
                groups = [pg for pg in ray.util.placement_group_table().values()
                          if pg["name"] == "lost-node1" and pg["state"] == "CREATED"]
                if groups:
                    node_id = groups[0]["bundles_to_node_id"][0]
                    tag = next(t for t, i in three_nodes.worker_ids.items() if i == node_id)
                    victim["node"], victim["tag"] = node_id, tag
                    time.sleep(1.0)  # the held ranks are inside their constructors
                    three_nodes.cluster.remove_node(three_nodes.workers[tag], allow_graceful=False)
                    return
            time.sleep(0.1)

    killer = threading.Thread(target=remove_the_held_ranks_node, daemon=True)
    killer.start()
    started = time.monotonic()
    with pytest.raises(WorkerStartupError) as caught:
        RayWorkerGroup(cluster, builder(HELD), protocol=PolicyWorker, name_prefix="lost",
                       ready_timeout_s=110)
    killer.join(timeout=30)
    assert time.monotonic() - started < 100  # reported when the node died, not at the timeout
    err = caught.value
    assert err.node == victim["node"]
    assert err.rank is not None and err.rank >= HELD_FROM_RANK
    assert str(err).startswith(f"worker {HELD} rank {err.rank} on node {victim['node']} "
                               "failed to start: the actor died")
    assert_nothing_left(before)
