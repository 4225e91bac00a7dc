"""Refusal vs allocation: how much a refused config costs before it is refused.

For 1, 2 and 4 policy workers on a local Ray cluster: the time from `Policy(...)` with
`examples/configs/mismatched_quant.yaml` (R5: the Megatron quantized worker named on an
Automodel policy) to its WorkerConfigError, against the time to a ready worker group
for the corrected config (the same file with the expected quantized worker). Beside it,
the cost of the actors' import check (asked of the actors' environment before any
placement group; once per class, so measured with the cache cleared), and the refusal of
a class whose module is on the driver's path only (cold: both checks run). The actors and
placement groups every refusal created are read from Ray's record, dead and removed ones
included (must be zero). Run with `python -m bench.bench_refusal`.
"""

from __future__ import annotations

import copy
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

from nemo_rl.distributed.inventory import ray_record
from nemo_rl.distributed.verification import clear_verification_cache, verify_actors_can_import
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy

from bench.bench_support import CONFIGS, local_ray, median_s, print_table, ratio
from contracts import clear_cache
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import DRIVER_ENV, WorkerPlugin, WorkerRegistry, build_registry
from nemo_rl_workers.reading.loader import load_config

WORKERS = (1, 2, 4)
REFUSAL_RUNS = 25
ALLOCATION_RUNS = 2  # each start spawns real actors that import torch and quantize
GOAL = 0.01  # refusal (and the actors' import check) under 1% of allocation
EXPECTED = (
    "nemo_rl.modelopt.models.policy.workers.automodel_quant_policy_worker."
    "AutomodelQuantPolicyWorker"
)


def _sections() -> tuple[dict[str, Any], dict[str, Any]]:
    mismatched: dict[str, Any] = load_config(CONFIGS / "mismatched_quant.yaml")["policy"]
    corrected = copy.deepcopy(mismatched)
    corrected["worker_extension_cls_fqn"] = EXPECTED
    return mismatched, corrected


# A correct worker whose module the bench puts on the driver's path only.
DRIVER_ONLY_MODULE = """
from nemo_rl.models.policy.workers.automodel_policy_worker import AutomodelPolicyWorker


class DriverOnlyWorker(AutomodelPolicyWorker):
    pass
"""
DRIVER_ONLY = "bench_driver_only.DriverOnlyWorker"


def _refuse(
    cluster: RayVirtualCluster, section: dict[str, Any], registry: WorkerRegistry | None = None
) -> None:
    try:
        Policy(cluster, section, name_prefix="bench_refused", registry=registry)
    except WorkerConfigError:
        return
    raise AssertionError("the refused config was accepted")


def _cold(run: Callable[[], object]) -> Callable[[], object]:
    """`run` after forgetting every cached verdict, as in a fresh driver."""
    def cold() -> object:
        clear_verification_cache()
        clear_cache()
        return run()
    return cold


def measure(
    workers: int, mismatched: dict[str, Any], corrected: dict[str, Any],
    driver_only: tuple[dict[str, Any], WorkerRegistry],
) -> dict[str, Any]:
    cluster = RayVirtualCluster([workers], use_gpus=False, name=f"bench-refusal-{workers}")
    before = ray_record()
    refusal = median_s(lambda: _refuse(cluster, mismatched), REFUSAL_RUNS)
    section, registry = driver_only
    driver_only_refusal = median_s(_cold(lambda: _refuse(cluster, section, registry)),
                                   REFUSAL_RUNS)
    leaked = ray_record().since(before)
    import_check = median_s(
        _cold(lambda: verify_actors_can_import(EXPECTED, "policy", None)), REFUSAL_RUNS
    )
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
        "import_check_ms": round(import_check * 1000, 3),
        "import_check_over_allocation": ratio(import_check, allocation),
        "driver_only_refusal_ms": round(driver_only_refusal * 1000, 3),
        "driver_only_over_allocation": ratio(driver_only_refusal, allocation),
        "new_actors_after_refusal": len(leaked.actors),
        "new_placement_groups_after_refusal": len(leaked.placement_groups),
    }


def _driver_only(directory: str) -> tuple[dict[str, Any], WorkerRegistry]:
    """A policy section naming a correct worker whose module only the driver can find."""
    with open(f"{directory}/bench_driver_only.py", "w") as module:
        module.write(DRIVER_ONLY_MODULE)
    sys.path.insert(0, directory)
    registry = build_registry(entry_points=False)
    registry.add(WorkerPlugin(environments={DRIVER_ONLY: DRIVER_ENV}), source="bench")
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]
    section["worker_extension_cls_fqn"] = DRIVER_ONLY
    return section, registry


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
    with local_ray(), warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
        warnings.simplefilter("ignore")
        driver_only = _driver_only(tmp)
        _warm_up(corrected)
        try:
            rows = [measure(n, mismatched, corrected, driver_only) for n in WORKERS]
        finally:
            sys.path.remove(tmp)
    print(
        f"Refusal vs allocation (median of {REFUSAL_RUNS} refusals and {ALLOCATION_RUNS} "
        "starts per worker count; goal: each refusal and the actors' import check < 1% of "
        "allocation; new actors/PGs from Ray's record, dead and removed included)"
    )
    print_table(
        ("workers", "R5 refusal ms", "allocation s", "R5/allocation", "actors' import check ms",
         "check/allocation", "driver-only refusal ms", "driver-only/allocation", "new actors",
         "new PGs"),
        [
            (r["workers"], r["refusal_ms"], r["allocation_s"],
             f"{r['refusal_over_allocation']:.4%}", r["import_check_ms"],
             f"{r['import_check_over_allocation']:.4%}", r["driver_only_refusal_ms"],
             f"{r['driver_only_over_allocation']:.4%}",
             r["new_actors_after_refusal"], r["new_placement_groups_after_refusal"])
            for r in rows
        ],
    )
    worst = max(max(r["refusal_over_allocation"], r["import_check_over_allocation"],
                    r["driver_only_over_allocation"]) for r in rows)
    leaked = sum(r["new_actors_after_refusal"] + r["new_placement_groups_after_refusal"]
                 for r in rows)
    met = worst < GOAL and leaked == 0
    print(f"worst refusal/allocation {worst:.3%}; resources left by refusals: {leaked}; "
          f"goal {'met' if met else 'NOT met'}")
    return {"name": "refusal", "rows": rows, "worst_ratio": worst, "leaked": leaked,
            "goal_met": met}


if __name__ == "__main__":
    main()
