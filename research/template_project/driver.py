"""A complete driver: Ray, the cluster, the policy from YAML, the new method, shutdown.

    python research/template_project/driver.py [CONFIG]

The guide shows this file whole. It connects to the Ray cluster at RAY_ADDRESS, or
starts a local one; the worker class comes from `policy.worker_extension_cls_fqn`.
"""

from __future__ import annotations

import sys

import ray
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster, init_ray
from nemo_rl.models.policy.lm_policy import Policy
from template_project.protocols import WeightNormWorker

from nemo_rl_workers.reading.loader import load_config

CONFIG = "research/template_project/configs/single_update.yaml"  # from the repository root


def main(config_path: str = CONFIG) -> None:
    config = load_config(config_path)
    init_ray(num_cpus=2)
    # One bundle per GPU, as NeMo-RL sizes it from `cluster:`; CPU slivers here.
    nodes, gpus = config["cluster"]["num_nodes"], config["cluster"]["gpus_per_node"]
    cluster = RayVirtualCluster([gpus] * nodes, use_gpus=False, name="driver")
    try:
        policy = Policy(cluster, config["policy"])
        try:
            # The class was verified against WeightNormWorker (its registered Protocol),
            # so narrowing needs no further check; the call is typed: list[float].
            weights = policy.worker_group.narrow(WeightNormWorker)
            norms = weights.run_all(WeightNormWorker.get_weight_norm)
            print(f"{policy.fqn} runs on {policy.world_size} workers")
            for rank, norm in enumerate(norms):
                print(f"rank {rank}: get_weight_norm() = {norm:.4f}")
        finally:
            policy.shutdown()
    finally:
        cluster.shutdown()
        ray.shutdown()  # with RAY_ADDRESS, this only disconnects


if __name__ == "__main__":
    main(*sys.argv[1:2])
