"""A user's script on upstream's worker groups, on CPU: `python guard_script.py SCENARIO...`.

Starts its own local Ray cluster (2 CPUs); for each scenario, makes upstream's
`RayVirtualCluster` (no GPUs) and a `RayWorkerGroup` of the scenario's class, and prints
one JSON line: what happened (`refused`: the exception's type, text and notes, or
`results`) and what Ray's control store recorded during it, every state included (DEAD
actors, REMOVED placement groups). Exits 1 when any scenario raised.
"""

import importlib
import json
import sys
import traceback
from typing import Any

import ray
from ray._private import state

# Upstream's modules, the user's NeMo-RL (the corpus first on PYTHONPATH): imported by
# name, so type checkers, which see this repository's reference runtime under the same
# name, take them as Any.
_groups: Any = importlib.import_module("nemo_rl.distributed.worker_groups")
_cluster: Any = importlib.import_module("nemo_rl.distributed.virtual_cluster")
_registry: Any = importlib.import_module("nemo_rl.distributed.ray_actor_environment_registry")
_sharding: Any = importlib.import_module("nemo_rl.distributed.named_sharding")
ACTOR_ENVIRONMENT_REGISTRY: dict[str, str] = _registry.ACTOR_ENVIRONMENT_REGISTRY
PY_EXECUTABLES: Any = _cluster.PY_EXECUTABLES
RayVirtualCluster: Any = _cluster.RayVirtualCluster
NamedSharding: Any = _sharding.NamedSharding
MultiWorkerFuture: Any = _groups.MultiWorkerFuture
RayWorkerBuilder: Any = _groups.RayWorkerBuilder
RayWorkerGroup: Any = _groups.RayWorkerGroup

CLASSES = {
    "good": "guard_workers.EchoWorker",
    "undefined": "guard_workers.NoSuchWorker",
    "undecorated": "guard_workers.PlainWorker",
    "subclass": "guard_subclass_worker.LouderWorker",
    "unregistered": "guard_workers.EchoWorker",
    "boom": "guard_workers.EchoWorker",
    "missing": "guard_workers.EchoWorker",
    "latin1": "guard_latin1_worker.Latin1Worker",
    "injected-bug": "guard_workers.EchoWorker",
    "import-fails": "guard_broken_worker.BrokenWorker",
    "pg-first": "guard_workers.PlainWorker",  # the cluster's placement group made before
    # Subclasses of upstream's vLLM worker whose own code does not fit it:
    "override-unfit": "guard_vllm_workers.NoKwargsEngineWorker",
    "vllm-clash": "guard_vllm_workers.OwnExtensionWorker",
    # The fork's EchoDriver (a driver of the tree) constructs these groups:
    "driver-missing": "guard_workers.EchoWorker",  # lacks ping
    "driver-good": "guard_workers.PingWorker",
    "driver-own": "nemo_rl.models.echo.echo_driver.EchoDefaultWorker",
    "driver-typed": "guard_workers.StrEchoWorker",  # echo takes a str, the Protocol an int
    # The fork's LoadingDriver (its default worker has no `load`) constructs these groups:
    "loading-tagged": "guard_loading_workers.TaggedLoadingWorker",
    "loading-hides-echo": "guard_loading_workers.EchoHidingWorker",
}


def _injected_guard_bug(*args: object, **kwargs: object) -> object:
    """A fault injected on purpose: the guard's class judgement fails with a bug."""
    raise RuntimeError("guard bug injected on purpose by the test")


def record() -> dict[str, str]:
    """Actor and placement group ID -> what it is and its state, as the GCS records it."""
    actors: dict[str, Any] = state.actors()
    groups = ray.util.placement_group_table()
    out = {k: f"{a.get('ActorClassName')} {a.get('State')}" for k, a in actors.items()}
    out.update({k: f"placement group {g.get('state')}" for k, g in groups.items()})
    return out


def main(scenarios: list[str]) -> int:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    code = 0
    for scenario in scenarios:
        before = record()
        out = scenario_run(scenario)
        after = record()
        out["ray"] = sorted(v for k, v in after.items() if k not in before)
        code = max(code, 1 if "refused" in out else 0)
        print(json.dumps(out), flush=True)
    ray.shutdown()
    return code


def scenario_run(scenario: str) -> dict[str, object]:
    fqn = CLASSES[scenario]
    ACTOR_ENVIRONMENT_REGISTRY.pop(fqn, None)
    if scenario != "unregistered":
        ACTOR_ENVIRONMENT_REGISTRY[fqn] = PY_EXECUTABLES.SYSTEM
    out: dict[str, object] = {"scenario": scenario}
    if scenario == "injected-bug":
        import nemo_rl_workers.guard.judgement as judgement

        judgement.judge_source = _injected_guard_bug  # type: ignore[assignment]
    cluster = RayVirtualCluster([2], use_gpus=False, num_gpus_per_node=0, name="guard")
    try:
        if scenario == "pg-first":
            cluster.get_placement_groups()  # as VllmGeneration does before its builder
        if scenario.startswith("driver-"):
            driver: Any = importlib.import_module("nemo_rl.models.echo.echo_driver")
            echo = driver.EchoDriver(cluster, worker_fqn=fqn)
            out["results"] = [echo.echo(7), echo.ping()]
            echo.worker_group.shutdown(force=True)
            return out
        if scenario.startswith("loading-"):
            module: Any = importlib.import_module("nemo_rl.models.echo.loading_driver")
            loading = module.LoadingDriver(cluster, worker_fqn=fqn)
            out["results"] = [loading.echo(7),
                              ray.get(loading.worker_group.run_all_workers_single_data("tag"))]
            loading.worker_group.shutdown(force=True)
            return out
        group = RayWorkerGroup(cluster, RayWorkerBuilder(fqn), name_prefix=f"guard-{scenario}",
                               sharding_annotations=NamedSharding(layout=[0, 1], names=["data"]))
        if scenario == "boom":
            futures = group.run_all_workers_single_data("boom")
            try:
                ray.get(futures)
            except ValueError as err:  # the worker's own type, kept
                out["ray_get"] = {"type": type(err).__name__, "notes": err.__notes__}
            bundle = MultiWorkerFuture(futures=group.run_all_workers_single_data("boom"))
            try:
                group.get_all_worker_results(bundle)
            except ValueError as err:
                out["get_all_worker_results"] = {"type": type(err).__name__,
                                                 "notes": err.__notes__}
        elif scenario == "missing":
            try:
                group.run_all_workers_single_data("no_such_method")
            except AttributeError as err:
                out["missing"] = {"type": type(err).__name__,
                                  "notes": getattr(err, "__notes__", [])}
        else:
            out["results"] = ray.get(group.run_all_workers_single_data("echo", value=7))
            if scenario == "good":
                out["armed"] = ray.get(group.run_all_workers_single_data("armed"))
        group.shutdown(force=True)
    except Exception as err:
        out["refused"] = {"type": type(err).__name__, "text": str(err),
                          "notes": getattr(err, "__notes__", [])}
        traceback.print_exc()
    finally:
        cluster.shutdown()  # what upstream made for a failed group is freed for the next
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
