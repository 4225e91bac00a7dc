"""Refusing a cluster that can never hold the workers, beside a start that fits.

On a Ray cluster already running (the bench's local one), each measured start runs in a
fresh driver process, as a user's job does: it connects to the cluster, then times
`Policy(RayVirtualCluster(...), section)` alone, for

- an impossible cluster: one node group of 2 bundles, each as large as the largest live
  node, so no node can ever hold the group (fault-free: nothing is injected, the verdict
  is Ray's own node table); the time to its `ClusterAllocationError`;
- the worker class's contract check alone (the import of its module and the verifier),
  what a refusal paid before the fit verdict moved ahead of it;
- a fitting start: one bundle, to a ready worker group (then shut down).

The actors and placement groups the refusals created are read from Ray's record, dead
and removed ones included (must be zero). Run with `python -m bench.bench_cluster_fit`.
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

from bench.bench_support import CONFIGS, child_env, local_ray, print_table, ratio, run_child

REFUSALS = 5
CHECKS = 3
STARTS = 2  # each spawns an actor that imports torch and builds a model
GOAL_S = 1.0  # the refusal, Policy(...) construction included

# One fresh driver: connect, then time one thing; prints one JSON line.
_DRIVER = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import ray
from nemo_rl.distributed.virtual_cluster import ClusterAllocationError, RayVirtualCluster
from nemo_rl.models.policy.lm_policy import Policy
from nemo_rl_workers.reading.loader import load_config

address, case, cpus = sys.argv[1], sys.argv[2], float(sys.argv[3])
ray.init(address=address, log_to_driver=False)
section = load_config(sys.argv[4])["policy"]
imported = "torch" in sys.modules
outcome = "started"
start = time.perf_counter()
if case == "refusal":
    cluster = RayVirtualCluster([2], use_gpus=False, cpus_per_bundle=cpus, name="fit-bench")
    try:
        Policy(cluster, section, name_prefix="fit_bench_refused")
        outcome = "accepted"
    except ClusterAllocationError as err:
        outcome = str(err)
elif case == "check":
    from contracts.init_call import POLICY_INIT
    from nemo_rl.distributed.verification import verify_worker_class
    from nemo_rl_workers.model.resolver import resolve_policy
    verify_worker_class(resolve_policy(section), section, role_init=POLICY_INIT)
else:
    cluster = RayVirtualCluster([1], use_gpus=False, name="fit-bench-start")
    Policy(cluster, section, name_prefix="fit_bench_start").shutdown()
    cluster.shutdown()
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "outcome": outcome, "torch_before": imported,
                  "torch_after": "torch" in sys.modules}))
"""


def _largest_node_cpus() -> float:
    import ray

    nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]  # ray: unannotated
    return max(float(n.get("Resources", {}).get("CPU", 0.0)) for n in nodes if n.get("Alive"))


def _driver(address: str, case: str, cpus: float) -> dict[str, Any]:
    done = run_child(
        [sys.executable, "-c", _DRIVER, address, case, str(cpus),
         str(CONFIGS / "grpo_tiny.yaml")],
        env=child_env(), timeout_s=600,
    )
    if done.returncode != 0 or done.timed_out:
        raise RuntimeError(f"the {case} driver failed ({done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> dict[str, object]:
    """Measure the refusal, the contract check and a fitting start; print and return them."""
    import ray
    from nemo_rl.distributed.inventory import ray_record

    with local_ray():
        address = ray.get_runtime_context().gcs_address
        cpus = _largest_node_cpus()
        before = ray_record()
        refusals = [_driver(address, "refusal", cpus) for _ in range(REFUSALS)]
        leaked = ray_record().since(before)
        checks = [_driver(address, "check", cpus) for _ in range(CHECKS)]
        starts = [_driver(address, "start", cpus) for _ in range(STARTS)]
    messages = {r["outcome"] for r in refusals}
    refusal = statistics.median(r["seconds"] for r in refusals)
    check = statistics.median(r["seconds"] for r in checks)
    start = statistics.median(r["seconds"] for r in starts)
    print(f"A cluster no node can hold (2 bundles x {cpus:g} CPU on one node, the largest live "
          f"node has {cpus:g} CPU) refused, beside the contract check and a fitting start; "
          "each in a fresh driver on the running cluster, timing Policy(...) alone "
          f"(median of {REFUSALS}, {CHECKS} and {STARTS} runs)")
    print_table(
        ("case", "median s", "min s", "max s", "torch imported by it", "vs fitting start"),
        [
            (name, round(median, 3), round(min(r["seconds"] for r in runs), 3),
             round(max(r["seconds"] for r in runs), 3),
             "yes" if any(r["torch_after"] and not r["torch_before"] for r in runs) else "no",
             f"{ratio(median, start):.2%}")
            for name, median, runs in (
                ("impossible cluster refused", refusal, refusals),
                ("contract check of the worker class", check, checks),
                ("fitting start (1 worker, to ready)", start, starts),
            )
        ],
    )
    print(f"refusal message: {' | '.join(sorted(messages))}")
    refused = all(r["outcome"].startswith("cluster fit-bench can never be placed")
                  for r in refusals)
    met = refused and refusal <= GOAL_S and leaked.empty
    print(f"refusal {refusal:.3f} s (goal <= {GOAL_S:g} s); created by the refusals: "
          f"{leaked.describe()}; goal {'met' if met else 'NOT met'}")
    return {"name": "cluster_fit", "refusal_s": round(refusal, 4), "check_s": round(check, 4),
            "start_s": round(start, 4), "leaked": not leaked.empty, "goal_met": met}


if __name__ == "__main__":
    main()
