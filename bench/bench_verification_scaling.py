"""Verification does not grow with workers: real group starts of 1, 8 and 32 actors.

Each start is a real `RayWorkerGroup` of one light class (`tests.ray.light_workers`: no
torch, 0.01 CPU per bundle) on a local Ray cluster, with the verification cache cleared
first, as in a fresh driver; once with the class in the driver's environment (checked
in-process; the class module already imported) and once in a second environment (its own
interpreter and prefix, a new one per start so no warm worker process is reused; checked
by one Ray task there, which imports the class first). Every figure is measured: the
start's wall time, the checks that ran as recorded by the checks themselves
(`verification_report`: kind, interpreter, process, node), each check's time where it ran
and as the start waited for it (task dispatch and worker-process start included), and the
actors Ray recorded for the start (`ray_record`, dead ones included).
Run with `python -m bench.bench_verification_scaling`.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nemo_rl.distributed.inventory import ray_record
from nemo_rl.distributed.verification import (
    ACTORS_IMPORT,
    CONTRACT,
    clear_verification_cache,
    verification_report,
)
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import RayWorkerGroup

from bench.bench_support import local_ray, print_table, ratio
from contracts import clear_cache
from contracts.protocols import PolicyWorker
from nemo_rl_workers.model.registry import DRIVER_ENV, ActorEnvironment
from tests.ray.observed import LIGHT_FQN, light_builder
from tests.ray.second_env import make_second_env

WORKERS = (1, 8, 32)
RUNS = 2  # starts per (environment, worker count); each spawns real actor processes


def start_once(env: ActorEnvironment, workers: int) -> dict[str, Any]:
    """One real group start from a cold verification cache; what ran, where, how long."""
    clear_verification_cache()
    clear_cache()  # the contracts' own per-(class, Protocol) cache, too
    cluster = RayVirtualCluster([workers], use_gpus=False, name=f"bench-scaling-{workers}")
    before = ray_record()
    start = time.perf_counter()
    group = RayWorkerGroup(cluster, dataclasses.replace(light_builder(), env=env),
                           protocol=PolicyWorker, name_prefix=f"bench_scaling_{workers}")
    start_s = time.perf_counter() - start
    group.shutdown()
    cluster.shutdown()
    actors = sum(d.startswith("WorkerHost ") for d in ray_record().since(before).actors.values())
    runs = [r for r in verification_report() if r.fqn == LIGHT_FQN]
    contract = [r for r in runs if r.kind == CONTRACT]
    probes = [r for r in runs if r.kind == ACTORS_IMPORT]
    return {
        "start_s": start_s,
        "actors": actors,
        "contract_runs": len(contract),
        "processes": len({(r.where.node, r.where.pid) for r in contract}),
        "in_driver": all(r.where.pid == os.getpid() for r in contract),
        "contract_s": sum(r.seconds for r in contract),
        "contract_ran_s": sum(r.ran_s for r in contract),
        "probe_runs": len(probes),
        "probe_s": max((r.seconds for r in probes), default=0.0),
    }


def measure(name: str, fresh_env: Callable[[], ActorEnvironment], workers: int) -> dict[str, Any]:
    samples = [start_once(fresh_env(), workers) for _ in range(RUNS)]
    return {
        "env": name,
        "workers": workers,
        "actors_started": samples[-1]["actors"],
        "start_s": round(statistics.median(s["start_s"] for s in samples), 3),
        "contract_runs": max(s["contract_runs"] for s in samples),
        "contract_processes": max(s["processes"] for s in samples),
        "contract_in_driver": all(s["in_driver"] for s in samples),
        "contract_ms": round(statistics.median(s["contract_s"] for s in samples) * 1000, 2),
        "contract_ran_ms": round(
            statistics.median(s["contract_ran_s"] for s in samples) * 1000, 2),
        "probe_runs": max(s["probe_runs"] for s in samples),
        "probe_ms": round(statistics.median(s["probe_s"] for s in samples) * 1000, 2),
    }


def main() -> dict[str, object]:
    """Start groups of 1, 8 and 32 light actors in two environments; print and return it."""
    rows: list[dict[str, Any]] = []
    with local_ray(), tempfile.TemporaryDirectory() as tmp:
        made = itertools.count()

        def fresh_second() -> ActorEnvironment:
            # A new interpreter path per start: Ray cannot reuse a warm worker process
            # (with the class imported and its verdict cached), as after a fresh install.
            return ActorEnvironment("second", make_second_env(Path(tmp) / f"second{next(made)}"))

        envs: dict[str, Callable[[], ActorEnvironment]] = {
            "driver": lambda: DRIVER_ENV, "second": fresh_second,
        }
        for name, fresh_env in envs.items():
            start_once(fresh_env(), 1)  # the first start imports and spawns: not in the figures
            rows += [measure(name, fresh_env, n) for n in WORKERS]
    for row in rows:
        first = next(r for r in rows if r["env"] == row["env"])
        row["contract_vs_1_worker"] = round(
            ratio(row["contract_ran_ms"], first["contract_ran_ms"]), 2)
    print(f"Real group starts of one light class (median of {RUNS} starts; verification cache "
          "cleared before each; checks counted where they ran)")
    print_table(
        ("env", "workers", "actors started", "start s", "contract checks", "in processes",
         "in driver", "check ms where run", "vs 1 worker", "waited ms", "actors' import checks",
         "import waited ms"),
        [(r["env"], r["workers"], r["actors_started"], r["start_s"], r["contract_runs"],
          r["contract_processes"], r["contract_in_driver"], r["contract_ran_ms"],
          r["contract_vs_1_worker"], r["contract_ms"], r["probe_runs"], r["probe_ms"])
         for r in rows],
    )
    flat = all(r["contract_runs"] == 1 and r["contract_processes"] == 1 and r["probe_runs"] == 1
               and r["actors_started"] == r["workers"] for r in rows)
    print("checks per start: " + ("1 contract check and 1 actors' import check (one node) for "
                                  "every worker count" if flat else "GROW with workers"))
    return {"name": "verification_scaling", "runs": RUNS, "rows": rows, "constant_runs": flat}


if __name__ == "__main__":
    main()
