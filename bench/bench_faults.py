"""Faults during a call: time from the fault to the error, and shutdown after it.

For each kind of injected fault (tests/ray/call_fault_workers.py: raise, exit, kill, a
hang ended by the call timeout, a hang ended by the peers' own collective timeout) and
for 2 and 4 light workers (no torch): the time from the call (the fault happens at once
inside it) to the WorkerCallError, what that is beyond the configured bound, the time
`shutdown()` then takes, and what Ray's record still shows alive afterwards (must be 0).
Beside it, the cost of collecting outcomes on a call that succeeds: `run_all` of a no-op
against a bare `ray.get` on the same actors, interleaved. Run with
`python -m bench.bench_faults`.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

import ray
from nemo_rl.distributed.inventory import ray_record
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import (
    DEFAULT_SETTLE_S,
    RayWorkerBuilder,
    RayWorkerGroup,
    WorkerCallError,
)

from bench.bench_support import local_ray, print_table, ratio
from contracts.protocols import PolicyWorker
from contracts.types import TrainBatch
from nemo_rl_workers.model.registry import DRIVER_ENV
from tests.ray.call_fault_workers import FAULT_FQN

WORKERS = (2, 4)
RUNS = 2
CALL_TIMEOUT_S = 2.0
BARRIER_S = 2.0
NOOP_CALLS = 300
BATCH: TrainBatch = {"input_ids": [[1, 2, 3]]}
SHUTDOWN_GOAL_S = 10.0


@dataclass(frozen=True)
class Kind:
    name: str
    fault: dict[str, Any]
    call_timeout_s: float | None
    bound_s: float  # what the fault may take by design before it is an error


KINDS = (
    Kind("raise", {"kind": "raise", "ranks": [1]}, None, 0.0),
    Kind("die: os._exit", {"kind": "exit", "ranks": [1]}, None, 0.0),
    Kind("die: ray.kill", {"kind": "kill", "ranks": [1]}, None, 0.0),
    Kind("hang: call timeout", {"kind": "hang", "ranks": [1], "barrier_s": 600},
         CALL_TIMEOUT_S, CALL_TIMEOUT_S),
    Kind("hang: peers give up", {"kind": "hang", "ranks": [1], "barrier_s": BARRIER_S},
         None, BARRIER_S + DEFAULT_SETTLE_S),
)


def _one(kind: Kind, workers: int, run: int) -> tuple[float, float, int, str]:
    """(fault to error s, shutdown s, left alive, the sentence's kind)."""
    before = ray_record()
    name = f"bench_fault_{workers}_{run}_{KINDS.index(kind)}"
    cluster = RayVirtualCluster([workers], use_gpus=False, name=name)
    section: dict[str, Any] = {"fault": kind.fault}
    if kind.call_timeout_s is not None:
        section["call_timeout_s"] = kind.call_timeout_s
    builder = RayWorkerBuilder(fqn=FAULT_FQN, env=DRIVER_ENV, config=section,
                               protocol="PolicyWorker")
    group: RayWorkerGroup[PolicyWorker] = RayWorkerGroup(
        cluster, builder, protocol=PolicyWorker, name_prefix=name, num_workers=workers)
    said = "none"
    try:
        start = time.perf_counter()
        try:
            group.run_all(PolicyWorker.train, BATCH)
        except WorkerCallError as err:
            said = err.kind
        to_error = time.perf_counter() - start
    finally:
        start = time.perf_counter()
        group.shutdown()
        cluster.shutdown()
        shutdown = time.perf_counter() - start
    created = ray_record().since(before)
    alive = sum(1 for d in created.actors.values() if not d.endswith(" DEAD"))
    alive += sum(1 for d in created.placement_groups.values() if not d.endswith(" REMOVED"))
    return to_error, shutdown, alive, said


def _noop_overhead() -> tuple[float, float]:
    """Median seconds of run_all(is_alive) and of a bare ray.get on the same 2 actors."""
    cluster = RayVirtualCluster([2], use_gpus=False, name="bench_fault_noop")
    builder = RayWorkerBuilder(fqn=FAULT_FQN, env=DRIVER_ENV, config={},
                               protocol="PolicyWorker")
    group: RayWorkerGroup[PolicyWorker] = RayWorkerGroup(
        cluster, builder, protocol=PolicyWorker, name_prefix="bench_fault_noop")
    grouped: list[float] = []
    bare: list[float] = []
    try:
        for _ in range(NOOP_CALLS):
            start = time.perf_counter()
            group.run_all(PolicyWorker.is_alive)
            grouped.append(time.perf_counter() - start)
            start = time.perf_counter()
            ray.get([w.call.remote("is_alive") for w in group.workers])
            bare.append(time.perf_counter() - start)
    finally:
        group.shutdown()
        cluster.shutdown()
    return statistics.median(grouped), statistics.median(bare)


def main() -> dict[str, object]:
    rows: list[tuple[object, ...]] = []
    worst_shutdown = 0.0
    left = 0
    with local_ray():
        for kind in KINDS:
            for workers in WORKERS:
                runs = [_one(kind, workers, r) for r in range(RUNS)]
                to_error = statistics.median(r[0] for r in runs)
                shutdown = statistics.median(r[1] for r in runs)
                worst_shutdown = max(worst_shutdown, *(r[1] for r in runs))
                left += sum(r[2] for r in runs)
                said = ",".join(sorted({r[3] for r in runs}))
                rows.append((kind.name, workers, said, f"{to_error:.2f}", f"{kind.bound_s:g}",
                             f"{to_error - kind.bound_s:.2f}", f"{shutdown:.2f}",
                             sum(r[2] for r in runs)))
        grouped, bare = _noop_overhead()
    print(f"Injected faults in run_all(train) over light workers; median of {RUNS} runs each; "
          f"settle after a failure {DEFAULT_SETTLE_S:g} s; goal: shutdown after any fault "
          f"<= {SHUTDOWN_GOAL_S:g} s and nothing left alive in Ray's record")
    print_table(("fault", "workers", "error kind", "fault to error s", "bound s",
                 "beyond bound s", "shutdown s", "left alive"), rows)
    met = worst_shutdown <= SHUTDOWN_GOAL_S and left == 0
    print(f"worst shutdown {worst_shutdown:.2f} s; actors/PGs left alive: {left}; goal "
          f"{'met' if met else 'NOT met'}")
    print(f"a call that succeeds: run_all(is_alive) over 2 actors {grouped * 1e6:.0f} us vs "
          f"bare ray.get {bare * 1e6:.0f} us (x{ratio(grouped, bare):.2f}; median of "
          f"{NOOP_CALLS}, interleaved)")
    return {"name": "faults", "rows": rows, "worst_shutdown_s": worst_shutdown,
            "left_alive": left, "noop_ratio": ratio(grouped, bare), "goal_met": met}


if __name__ == "__main__":
    main()
