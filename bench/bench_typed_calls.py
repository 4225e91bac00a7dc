"""Typed worker calls vs the string path: what the Protocol method object costs per call.

A 2-rank Policy on a local Ray cluster; the no-op `PolicyWorker.is_alive` is called on
every rank, interleaved call by call (so drift on this shared machine hits all paths
alike): the typed `run_all(PolicyWorker.is_alive)`; the string path as `run_all` did it
before (`ray.get([actor.call.remote("is_alive") ...])`); and the deprecated by-name
`run_all("is_alive")` kept for old code. Goal: typed <= 1.05 x the old string path.
Run with `python -m bench.bench_typed_calls`.
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import ray
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy

from bench.bench_support import CONFIGS, local_ray, print_table, ratio
from contracts import PolicyWorker
from nemo_rl_workers.reading.loader import load_config

CALLS = 1500  # per path, interleaved
WARM_UP = 100
GOAL = 1.05


def _time(run: Callable[[], object], into: list[float]) -> None:
    start = time.perf_counter()
    run()
    into.append(time.perf_counter() - start)


def measure(policy: Policy) -> dict[str, float]:
    group = policy.worker_group
    actors = group.workers
    untyped: Any = group  # the deprecated overload, without the checkers' flag

    def typed() -> list[bool]:
        return group.run_all(PolicyWorker.is_alive)

    def string_before() -> list[Any]:
        result: list[Any] = ray.get([a.call.remote("is_alive") for a in actors])
        return result

    def by_name() -> list[Any]:
        result: list[Any] = untyped.run_all("is_alive")
        return result

    paths = {"typed": typed, "string (before)": string_before, "by name (deprecated)": by_name}
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(WARM_UP):
        for run in paths.values():
            run()
    for _ in range(CALLS):
        for name, run in paths.items():
            _time(run, samples[name])
    return {name: statistics.median(s) for name, s in samples.items()}


def main() -> dict[str, object]:
    section = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]
    with local_ray(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = RayVirtualCluster([2], use_gpus=False, name="bench-typed-calls")
        try:
            policy = Policy(cluster, section, name_prefix="bench_typed")
            try:
                assert policy.world_size == 2
                medians = measure(policy)
            finally:
                policy.shutdown()
        finally:
            cluster.shutdown()
    base = medians["string (before)"]
    print(f"run_all of a no-op (PolicyWorker.is_alive) over 2 actors: median of {CALLS} "
          f"calls per path, interleaved; goal: typed <= {GOAL:.2f} x string (before)")
    print_table(
        ("path", "median us", "x string (before)"),
        [(name, f"{m * 1e6:.1f}", f"{ratio(m, base):.3f}") for name, m in medians.items()],
    )
    typed_ratio = ratio(medians["typed"], base)
    met = typed_ratio <= GOAL
    print(f"typed / string (before) = {typed_ratio:.3f}; goal {'met' if met else 'NOT met'}")
    return {"name": "typed_calls", "medians_s": medians, "ratio": typed_ratio, "goal_met": met}


if __name__ == "__main__":
    main()
