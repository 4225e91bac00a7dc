"""`make run`: the worker contracts end to end, on a local CPU Ray cluster.

1. Resolve the workers of the shipped INT8 example and print each resolution.
2. Start the policy (2 workers, ModelOpt INT8) and vLLM generation (model loading
   deferred without vLLM/CUDA) worker groups, after verifying each class once.
3. Train two steps and print the losses, then the quantizer statistics.
4. Show the mismatched config refused before allocation: Ray's record (dead actors
   and removed placement groups included) holds nothing it created; step 2's starts
   are in the same record.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
import warnings
from pathlib import Path

from contracts.types import TrainBatch
from nemo_rl.distributed.inventory import ray_record
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.resolver import resolve_config
from nemo_rl_workers.reading.loader import load_config

# The repository's example configs: runtime/nemo_rl/demo.py -> the checkout's examples/.
CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"


def _batch(rows: int, vocab: int, seed: int) -> TrainBatch:
    rng = random.Random(seed)
    return TrainBatch(
        input_ids=[[rng.randrange(vocab) for _ in range(rng.randint(6, 12))] for _ in range(rows)]
    )


def refused_before_allocation(mismatched_path: Path, bundles: list[int]) -> bool:
    """Step 4: the mismatched config is refused, and Ray's own record (which keeps dead
    actors and removed placement groups) shows the refusal never created anything."""
    from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
    from nemo_rl.models.policy.lm_policy import Policy

    print(f"\n== 4. {mismatched_path.name} is refused before allocation")
    mismatched = load_config(mismatched_path)
    rejected_cluster = RayVirtualCluster(bundles, use_gpus=False, name="demo-rejected")
    before = ray_record()
    try:
        accepted = Policy(rejected_cluster, mismatched["policy"], name_prefix="demo_rejected")
    except WorkerConfigError as err:
        for problem in err.problems:
            print(f"  WorkerConfigError [{problem.rule}] {problem.path}\n"
                  f"    expected: {problem.expected}\n    given:    {problem.given}\n"
                  f"    {problem.message}")
    else:
        accepted.shutdown()
        print("  unexpectedly accepted")
        return False
    finally:
        rejected_cluster.shutdown()
    created = ray_record().since(before)
    print(f"  created on Ray by the refusal (its record, dead and removed included): "
          f"{created.describe()}")
    return created.empty


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nemo_rl.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(CONFIGS / "grpo_tiny_int8.yaml"))
    parser.add_argument("--mismatched", default=str(CONFIGS / "mismatched_quant.yaml"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(name)s] %(message)s")
    for noisy in ("ray", "nemo_rl.distributed.virtual_cluster"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    start = time.monotonic()

    config = load_config(args.config)
    print(f"== 1. resolve the workers of {Path(args.config).name} (pure, nothing imported)")
    for r in resolve_config(config):
        print(f"  {r.field_path} -> {r.fqn}\n      rule {r.rule}, must satisfy {r.protocol}, "
              f"environment {r.env.name!r}")
        for text in r.warnings:
            print(f"      warning: {text}")

    import ray

    from nemo_rl.distributed.verification import verification_report, verification_runs
    from nemo_rl.distributed.virtual_cluster import RayVirtualCluster, init_ray
    from nemo_rl.models.generation.vllm.vllm_generation import VllmGeneration
    from nemo_rl.models.policy.lm_policy import Policy

    started_here = not ray.is_initialized()
    init_ray(num_cpus=2, log_to_driver=False)
    cluster_cfg = config.get("cluster", {})
    bundles = [int(cluster_cfg.get("gpus_per_node", 2))] * int(cluster_cfg.get("num_nodes", 1))
    policy_cluster = RayVirtualCluster(bundles, use_gpus=False, name="demo-policy")
    generation_cluster = RayVirtualCluster([1], use_gpus=False, name="demo-generation")
    policy: Policy | None = None
    generation: VllmGeneration | None = None
    try:
        print(f"\n== 2. start the worker groups on a CPU cluster of {bundles} bundle(s)")
        before_starts = ray_record()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            policy = Policy(policy_cluster, config["policy"], name_prefix="demo_policy")
            generation = VllmGeneration(generation_cluster, config["policy"]["generation"],
                                        name_prefix="demo_vllm")
        for w in caught:
            if Path(w.filename).resolve() == Path(__file__).resolve():
                print(f"  UserWarning at {Path(w.filename).name}:{w.lineno}: {w.message}")
        print(f"  policy:     {policy.world_size} x {policy.fqn}")
        print(f"  generation: {generation.worker_group.world_size} x {generation.fqn} "
              f"({generation.mode}, deferred={generation.deferred})")
        print(f"  created on Ray by these starts: {ray_record().since(before_starts).describe()}")
        runs = verification_report()
        contract = verification_runs()
        print(f"  checks before allocation: {len(runs)}, once per class, not per actor "
              f"({contract} contract, {len(runs) - contract} actors' import):")
        for run in runs:
            print(f"    {run.kind} check of {run.fqn.rpartition('.')[2]} ran in {run.where}")
        print(f"  written back: policy.worker_extension_cls_fqn = "
              f"{config['policy']['worker_extension_cls_fqn']}")
        engine = generation.get_engine_args()
        print(f"  vLLM engine args: {', '.join(f'{k}={v}' for k, v in sorted(engine.items()))}")

        print("\n== 3. train two steps (data-parallel over both policy workers)")
        vocab = int(config["policy"].get("tiny_model", {}).get("vocab_size", 128))
        batch = _batch(8, vocab, seed=0)
        for step in (1, 2):
            result = policy.train(batch)
            print(f"  step {step}: loss {result['loss']:.4f}, grad_norm {result['grad_norm']:.3f}, "
                  f"{result['num_tokens']} tokens")
        stats = policy.get_quantizer_stats()
        print("  quantizer stats (summed over workers): "
              + ", ".join(f"{k}={v}" for k, v in stats.items()))

        if not refused_before_allocation(Path(args.mismatched), bundles):
            return 1
    finally:
        for group in (generation, policy):
            if group is not None:
                group.shutdown()
        policy_cluster.shutdown()
        generation_cluster.shutdown()
        if started_here:
            ray.shutdown()
    print(f"\ndone in {time.monotonic() - start:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
