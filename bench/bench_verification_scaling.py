"""Verification does not grow with workers: time and runs for 1, 8 and 64 workers of one class.

Larger groups are simulated without spawning actors, through the same calls a real
start makes before it reserves anything: `plan_policy` (the pipeline `Policy` runs,
which verifies the class) and then the worker group's own pre-allocation check
(`RayWorkerBuilder.check()` -> `verify_check`), with the cluster's world size. The
verification caches are cleared before each start, as in a fresh driver. For contrast,
`per-actor` is what verifying once per actor would cost (the uncached check, times N).
Run with `python -m bench.bench_verification_scaling`.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from bench.bench_support import CONFIGS, median_s, print_table, ratio
from contracts import clear_cache
from contracts.init_call import POLICY_INIT
from nemo_rl.config.loader import load_config
from nemo_rl.distributed.verification import (
    clear_verification_cache,
    verification_runs,
    verify_check,
)
from nemo_rl.distributed.worker_groups import RayWorkerBuilder
from nemo_rl.pipeline import plan_policy

WORKERS = (1, 8, 64)
RUNS = 15


def pre_allocation(section: dict[str, Any], world_size: int) -> int:
    """Everything a start of `world_size` workers verifies before allocation; runs counted."""
    clear_verification_cache()
    clear_cache()  # the contracts' own per-(class, Protocol) cache, too
    plan = plan_policy(section, world_size=world_size, init_call=POLICY_INIT)
    builder = RayWorkerBuilder.from_resolution(plan.resolution, plan.section)
    check = builder.check()
    assert check is not None
    verify_check(check, builder.env)  # what RayWorkerGroup.__init__ does, once per group
    return verification_runs()


def main() -> dict[str, object]:
    """Measure the pre-allocation verification for each worker count; print and return it."""
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny_int8.yaml")["policy"]
    rows: list[dict[str, object]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # R3's automatic-worker warning, on every start
        pre_allocation(section, 1)  # imports the worker module: not part of the figures
        single = median_s(lambda: pre_allocation(section, 1), RUNS)
        for n in WORKERS:
            runs = pre_allocation(section, n)
            seconds = median_s(functools.partial(pre_allocation, section, n), RUNS)
            rows.append({
                "workers": n,
                "verify_ms": round(seconds * 1000, 3),
                "verification_runs": runs,
                "vs_1_worker": round(ratio(seconds, single), 2),
                "per_actor_ms": round(single * n * 1000, 1),
            })
    print(f"Pre-allocation verification by worker count (median of {RUNS}; cache cleared "
          "before each start)")
    print_table(
        ("workers", "verify ms", "verification runs", "vs 1 worker", "per-actor ms"),
        [(r["workers"], r["verify_ms"], r["verification_runs"], r["vs_1_worker"],
          r["per_actor_ms"]) for r in rows],
    )
    flat = all(r["verification_runs"] == 1 for r in rows)
    print(f"verification runs per start: {'1 for every worker count' if flat else 'GROWS'}")
    return {"name": "verification_scaling", "runs": RUNS, "rows": rows, "constant_runs": flat}


if __name__ == "__main__":
    main()
