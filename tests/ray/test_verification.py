"""Verification where the workers run: once per class per process, observed in real group
starts and in a real second interpreter; bounded in time; one error type."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import pytest
from nemo_rl.distributed.inventory import ray_record
from nemo_rl.distributed.verification import (
    Where,
    clear_verification_cache,
    verification_report,
    verification_runs,
    verify_worker_class,
)
from nemo_rl.distributed.virtual_cluster import RayVirtualCluster
from nemo_rl.distributed.worker_groups import RayWorkerGroup

from contracts.init_call import POLICY_INIT
from contracts.protocols import PolicyWorker
from nemo_rl_workers.errors import WorkerConfigError
from nemo_rl_workers.model.registry import DRIVER_ENV, ActorEnvironment
from nemo_rl_workers.model.resolver import Resolution, resolve_policy
from nemo_rl_workers.reading.loader import load_config
from tests.ray.fault_workers import MissingMethodWorker, fault_registry, fqn_of
from tests.ray.observed import (
    LIGHT_FQN,
    allocates_nothing,
    control_start_is_seen,
    light_builder,
)
from tests.ray.second_env import make_second_env

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
FIELD = "policy.worker_extension_cls_fqn"


@pytest.fixture(scope="module")
def second_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The interpreter of a real second environment (own prefix, same packages)."""
    return make_second_env(tmp_path_factory.mktemp("envs") / "second")


def section_with(fqn: str | None) -> dict[str, Any]:
    section: dict[str, Any] = load_config(CONFIGS / "grpo_tiny.yaml")["policy"]
    if fqn is not None:
        section["worker_extension_cls_fqn"] = fqn
    return section


def resolution_in(env: ActorEnvironment, cls: type) -> tuple[Resolution, dict[str, Any]]:
    fqn = fqn_of(cls)
    section = section_with(fqn)
    resolution = resolve_policy(section, registry=fault_registry({fqn: env}))
    return resolution, section


@pytest.mark.ray
@pytest.mark.parametrize("env_kind", ["driver", "second"])
def test_groups_of_1_8_32_actors_verify_once_per_class_per_process(
    ray_cluster: None, second_python: str, env_kind: str
) -> None:
    """Real group starts of one light class: each check runs once, in one process, for all
    41 actors; the record shows every actor really started."""
    env = DRIVER_ENV if env_kind == "driver" else ActorEnvironment("second", second_python)
    builder = dataclasses.replace(light_builder(), env=env)
    clear_verification_cache()
    before = ray_record()
    started = []
    for n in (1, 8, 32):
        cluster = RayVirtualCluster([n], use_gpus=False, name=f"scale-{env_kind}-{n}")
        group = RayWorkerGroup(cluster, builder, protocol=PolicyWorker,
                               name_prefix=f"scale_{env_kind}_{n}")
        started.append(group.world_size)
        group.shutdown()
        cluster.shutdown()
    created = ray_record().since(before)
    assert started == [1, 8, 32]
    assert sum(d.startswith("WorkerHost ") for d in created.actors.values()) == 41
    runs = [r for r in verification_report() if r.fqn == LIGHT_FQN]
    contract = [r for r in runs if r.kind == "contract"]
    probes = [r for r in runs if r.kind == "actors-import"]
    assert len(contract) == 1 and contract[0].passed  # 1 per class, not per actor or group
    assert len(probes) == 1 and probes[0].passed  # 1 per class per node (one node here)
    assert probes[0].where.interpreter == env.python  # asked as the actors will be
    if env.is_driver:
        assert contract[0].where == Where.here()  # in-process, in the driver
    else:
        assert contract[0].where.interpreter == second_python  # in the second environment
        assert contract[0].where.pid != os.getpid()


def test_a_rejection_is_cached_too_and_always_the_same_error() -> None:
    clear_verification_cache()
    resolution, section = resolution_in(ActorEnvironment("driver"), MissingMethodWorker)
    messages = []
    for _ in range(3):
        with pytest.raises(WorkerConfigError) as info:
            verify_worker_class(resolution, section, role_init=POLICY_INIT)
        messages.append(str(info.value))
    assert verification_runs() == 1
    assert len(set(messages)) == 1
    assert all(p.path == FIELD for p in info.value.problems)


def test_import_failure_is_a_problem_not_a_traceback() -> None:
    clear_verification_cache()
    section = section_with(None)
    resolution = resolve_policy(section)
    broken = dataclasses.replace(resolution, fqn="tests.ray.no_such_module.Worker")
    with pytest.raises(WorkerConfigError) as info:
        verify_worker_class(broken, section, role_init=POLICY_INIT)
    (problem,) = info.value.problems
    assert problem.path == FIELD
    assert problem.given == "tests.ray.no_such_module.Worker"
    assert "cannot be imported" in problem.message
    assert "ModuleNotFoundError" in problem.message
    assert "Traceback" not in str(info.value)


@pytest.mark.ray
def test_other_environment_is_checked_there_once(ray_cluster: None, second_python: str) -> None:
    # A real second interpreter (its own prefix): the report says the check ran there.
    clear_verification_cache()
    env = ActorEnvironment("second", py_executable=second_python)
    assert not env.is_driver
    resolution, section = resolution_in(env, MissingMethodWorker)
    with allocates_nothing():
        for _ in range(2):
            with pytest.raises(WorkerConfigError) as info:
                verify_worker_class(resolution, section, role_init=POLICY_INIT)
    (run,) = verification_report()
    assert run.kind == "contract" and not run.passed
    assert run.where.interpreter == second_python
    assert run.where.pid != os.getpid()
    assert run.where.node == Where.here().node  # the one node of the local cluster
    control_start_is_seen(RayVirtualCluster([1], use_gpus=False, name="verification-control"))
    assert any("PolicyWorker.get_logprobs" in p.message for p in info.value.problems)
    assert {p.given for p in info.value.problems} == {fqn_of(MissingMethodWorker)}


@pytest.mark.ray
def test_missing_interpreter_fails_fast_naming_the_worker(ray_cluster: None) -> None:
    clear_verification_cache()
    env = ActorEnvironment("gone", py_executable="/nonexistent/venv/bin/python")
    resolution, section = resolution_in(env, MissingMethodWorker)
    start = time.monotonic()
    with allocates_nothing(), pytest.raises(WorkerConfigError) as info:
        verify_worker_class(resolution, section, role_init=POLICY_INIT)
    assert time.monotonic() - start < 5
    assert verification_report() == ()  # no check could run: none is recorded
    control_start_is_seen(RayVirtualCluster([1], use_gpus=False, name="verification-control"))
    (problem,) = info.value.problems
    assert problem.path == FIELD
    assert fqn_of(MissingMethodWorker) in problem.message
    assert "/nonexistent/venv/bin/python" in problem.message
