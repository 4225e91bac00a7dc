"""A real Ray cluster of three nodes on this machine (`ray.cluster_utils.Cluster`).

The head (the driver's node) has 1 CPU and no GPU; two worker nodes have 1 CPU and 2
logical GPUs each, so GPU bundles can only go to them, as on a real cluster. Each node's
raylet (and so every worker process it starts) sees NEMO_TEST_NODE=head|w1|w2.

These tests need the process to themselves: the suite's one-node session cluster must not
be running. `make test-cluster` runs them in their own pytest process (NEMO_RL_CLUSTER_TESTS=1);
a plain `pytest` run leaves this folder out (see tests/conftest.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPUS_PER_NODE = 2


@dataclass
class ThreeNodes:
    cluster: Any  # ray.cluster_utils.Cluster (unannotated)
    head_id: str
    worker_ids: dict[str, str]  # tag (w1, w2) -> node ID
    workers: dict[str, Any]  # tag -> the Cluster's node handle, to remove it


@pytest.fixture(scope="module")
def three_nodes() -> Iterator[ThreeNodes]:
    import ray
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        pytest.skip("a Ray cluster is already connected in this process; run make test-cluster")
    cluster: Any = Cluster(  # ray.cluster_utils is unannotated
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False,
                        "env_vars": {"NEMO_TEST_NODE": "head"}},
    )
    try:
        handles = {
            tag: cluster.add_node(num_cpus=1, num_gpus=GPUS_PER_NODE,
                                  env_vars={"NEMO_TEST_NODE": tag})
            for tag in ("w1", "w2")
        }
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": REPO_ROOT}})
        head_id = ray.get_runtime_context().get_node_id()
        ids = {tag: str(handle.node_id) for tag, handle in handles.items()}
        yield ThreeNodes(cluster, head_id, ids, dict(handles))
    finally:
        ray.shutdown()
        cluster.shutdown()
