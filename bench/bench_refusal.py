"""Refusal vs allocation: how much a mismatched quantized config costs before it is refused.

For 1, 2 and 4 policy workers on a local Ray cluster: the time from `Policy(...)` with
`examples/configs/mismatched_quant.yaml` (R5: the Megatron quantized worker named on an
Automodel policy) to its WorkerConfigError, against the time to a ready worker group
for the corrected config (the same file with the expected quantized worker); and the
named actors and placement groups that exist after each refusal (must be zero new).
Run with `python -m bench.bench_refusal`.
"""

from __future__ import annotations

import copy
import statistics
import time
import warnings
from typing import Any

from bench.bench_support import CONFIGS, local_ray, median_s, print_table, ratio
from nemo_rl.config.loader import load_config
from nemo_rl.distributed.inventory import ray_resources_snapshot
from nemo_rl.distributed.verification import clear_verification_cache
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.errors import WorkerConfigError
from nemo_rl.models.policy.lm_policy import Policy

WORKERS = (1, 2, 4)
REFUSAL_RUNS = 25
ALLOCATION_RUNS = 2  # each start spawns real actors that import torch and quantize
GOAL = 0.01  # refusal under 1% of allocation
EXPECTED = (
    "nemo_rl.modelopt.models.policy.workers.automodel_quant_policy_worker."
    "AutomodelQuantPolicyWorker"
)


def _sections() -> tuple[dict[str, Any], dict[str, Any]]:
    mismatched: dict[str, Any] = load_config(CONFIGS / "mismatched_quant.yaml")["policy"]
    corrected = copy.deepcopy(mismatched)
    corrected["worker_extension_cls_fqn"] = EXPECTED
    return mismatched, corrected


def _refuse(cluster: RayVirtualCluster, section: dict[str, Any]) -> None:
    try:
        Policy(cluster, section, name_prefix="bench_refused")
    except WorkerConfigError:
        return
    raise AssertionError("the mismatched config was accepted")


def measure(workers: int, mismatched: dict[str, Any], corrected: dict[str, Any]) -> dict[str, Any]:
    cluster = RayVirtualCluster([workers], use_gpus=False, name=f"bench-refusal-{workers}")
    before = ray_resources_snapshot()
    refusal = median_s(lambda: _refuse(cluster, mismatched), REFUSAL_RUNS)
    after = ray_resources_snapshot()
    starts: list[float] = []
    try:
        for _ in range(ALLOCATION_RUNS):
            # Verification is cached per class across starts; clear it so each start pays
            # the whole pre-allocation path, as a fresh driver would.
            clear_verification_cache()
            start = time.perf_counter()
            policy = Policy(cluster, copy.deepcopy(corrected), name_prefix="bench_alloc")
            starts.append(time.perf_counter() - start)
            assert policy.world_size == workers
            policy.shutdown()
    finally:
        cluster.shutdown()
    allocation = statistics.median(starts)
    return {
        "workers": workers,
        "refusal_ms": round(refusal * 1000, 3),
        "allocation_s": round(allocation, 3),
        "refusal_over_allocation": ratio(refusal, allocation),
        "new_actors_after_refusal": after[0] - before[0],
        "new_placement_groups_after_refusal": after[1] - before[1],
    }


def _warm_up(corrected: dict[str, Any]) -> None:
    """One start outside the figures: the first imports torch and ModelOpt in the driver."""
    cluster = RayVirtualCluster([1], use_gpus=False, name="bench-refusal-warm-up")
    try:
        Policy(cluster, copy.deepcopy(corrected), name_prefix="bench_warm").shutdown()
    finally:
        cluster.shutdown()


def main() -> dict[str, object]:
    """Measure refusal and allocation for each worker count, print and return the figures."""
    mismatched, corrected = _sections()
    rows: list[dict[str, Any]] = []
    with local_ray(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _warm_up(corrected)
        rows = [measure(n, mismatched, corrected) for n in WORKERS]
    print(
        f"Refusal vs allocation (median of {REFUSAL_RUNS} refusals and {ALLOCATION_RUNS} "
        "starts per worker count; goal: refusal < 1% of allocation)"
    )
    print_table(
        ("workers", "refusal ms", "allocation s", "refusal/allocation", "new actors",
         "new PGs"),
        [
            (r["workers"], r["refusal_ms"], r["allocation_s"],
             f"{r['refusal_over_allocation']:.1e} ({r['refusal_over_allocation']:.4%})",
             r["new_actors_after_refusal"], r["new_placement_groups_after_refusal"])
            for r in rows
        ],
    )
    worst = max(r["refusal_over_allocation"] for r in rows)
    leaked = sum(r["new_actors_after_refusal"] + r["new_placement_groups_after_refusal"]
                 for r in rows)
    met = worst < GOAL and leaked == 0
    print(f"worst refusal/allocation {worst:.3%}; resources left by refusals: {leaked}; "
          f"goal {'met' if met else 'NOT met'}")
    return {"name": "refusal", "rows": rows, "worst_ratio": worst, "leaked": leaked,
            "goal_met": met}


if __name__ == "__main__":
    main()
