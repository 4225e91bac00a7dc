"""One training step with the template's worker extension, selected from YAML.

    python single_update.py [--config configs/single_update.yaml]

Builds `Policy` from the config (the extension comes from
`policy.worker_extension_cls_fqn`, never from a constructor argument) on a local
CPU Ray cluster, or on the cluster at RAY_ADDRESS when that is set. The class was
verified against its registered Protocol `WeightNormWorker` before any actor
started, so the worker group narrows to it at once, and `get_weight_norm` is called
typed on every worker: once, then after one training step. It prints both and shuts
everything down it started.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from template_project.protocols import WeightNormWorker

from contracts.types import TrainBatch
from nemo_rl_workers.reading.loader import load_config

HERE = Path(__file__).resolve().parent
DEFAULT_CONFIG = HERE / "configs" / "single_update.yaml"


@dataclass(frozen=True)
class UpdateResult:
    """What one update did, per data-parallel rank."""

    fqn: str  # the worker class that ran
    rule: str  # the selection rule that chose it (R2: a configured extension)
    loss: float
    norms_before: list[float]
    norms_after: list[float]


def _batch(rows: int, vocab: int) -> TrainBatch:
    rng = random.Random(0)
    return TrainBatch(input_ids=[[rng.randrange(vocab) for _ in range(8)] for _ in range(rows)])


def single_update(config_path: str | Path = DEFAULT_CONFIG) -> UpdateResult:
    """Start the policy on a connected Ray cluster, update once, measure, shut down."""
    from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
    from nemo_rl.models.policy.lm_policy import Policy

    config = load_config(str(config_path))
    cluster_cfg = config.get("cluster", {})
    bundles = [int(cluster_cfg.get("gpus_per_node", 1))] * int(cluster_cfg.get("num_nodes", 1))
    cluster = RayVirtualCluster(bundles, use_gpus=False, name="template-single-update")
    policy: Policy | None = None
    try:
        policy = Policy(cluster, config["policy"], name_prefix="template_policy")
        # Typed by the extension's Protocol: both checkers know get_weight_norm() -> float.
        workers = policy.worker_group.narrow(WeightNormWorker)
        before = workers.run_all(WeightNormWorker.get_weight_norm)
        vocab = int(config["policy"]["tiny_model"]["vocab_size"])
        result = policy.train(_batch(2 * policy.world_size, vocab))
        after = workers.run_all(WeightNormWorker.get_weight_norm)
        return UpdateResult(policy.fqn, policy.plan.resolution.rule, result["loss"], before, after)
    finally:
        if policy is not None:
            policy.shutdown()
        cluster.shutdown()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    args = parser.parse_args(argv)

    import ray
    from nemo_rl.distributed.virtual_cluster import init_ray

    started_here = not ray.is_initialized()
    init_ray(num_cpus=2, log_to_driver=False)
    try:
        done = single_update(args.config)
    finally:
        if started_here:
            ray.shutdown()
    print(f"worker class: {done.fqn} (rule {done.rule})")
    print(f"one training step: loss {done.loss:.4f}")
    for rank, (old, new) in enumerate(zip(done.norms_before, done.norms_after, strict=True)):
        change = f"{old:.4f} -> {new:.4f} (changed by {new - old:+.4f})"
        print(f"rank {rank}: get_weight_norm() {change}")
    return 0 if all(a != b for a, b in zip(done.norms_before, done.norms_after, strict=True)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
