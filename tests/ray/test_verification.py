"""Verification in the worker's environment: once per class, bounded in time, one error type."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from contracts.init_call import POLICY_INIT
from nemo_rl.config.loader import load_config
from nemo_rl.distributed.inventory import ray_resources_snapshot
from nemo_rl.distributed.verification import (
    clear_verification_cache,
    verification_runs,
    verify_worker_class,
)
from nemo_rl.errors import WorkerConfigError
from nemo_rl.workers.registry import ActorEnvironment
from nemo_rl.workers.resolver import Resolution, resolve_policy
from tests.ray.fault_workers import MissingMethodWorker, fault_registry, fqn_of

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
FIELD = "policy.worker_extension_cls_fqn"


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


def test_once_per_class_not_once_per_actor() -> None:
    clear_verification_cache()
    section = section_with(None)
    resolution = resolve_policy(section)
    for _ in range(64):
        verify_worker_class(resolution, section, role_init=POLICY_INIT)
    assert verification_runs() == 1


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
def test_other_environment_runs_one_ray_task(ray_cluster: None) -> None:
    # The same interpreter under another path: not the driver's, so a Ray task checks it.
    other = os.path.join(os.path.dirname(sys.executable), "python3")
    if not os.path.exists(other) or other == sys.executable:
        pytest.skip("no second path to the interpreter")
    clear_verification_cache()
    env = ActorEnvironment("other", py_executable=other)
    assert not env.is_driver
    resolution, section = resolution_in(env, MissingMethodWorker)
    before = ray_resources_snapshot()
    for _ in range(2):
        with pytest.raises(WorkerConfigError) as info:
            verify_worker_class(resolution, section, role_init=POLICY_INIT)
    assert verification_runs() == 1
    assert ray_resources_snapshot() == before
    assert any("PolicyWorker.get_logprobs" in p.message for p in info.value.problems)
    assert {p.given for p in info.value.problems} == {fqn_of(MissingMethodWorker)}


@pytest.mark.ray
def test_missing_interpreter_fails_fast_naming_the_worker(ray_cluster: None) -> None:
    clear_verification_cache()
    env = ActorEnvironment("gone", py_executable="/nonexistent/venv/bin/python")
    resolution, section = resolution_in(env, MissingMethodWorker)
    start = time.monotonic()
    with pytest.raises(WorkerConfigError) as info:
        verify_worker_class(resolution, section, role_init=POLICY_INIT)
    assert time.monotonic() - start < 5
    (problem,) = info.value.problems
    assert problem.path == FIELD
    assert fqn_of(MissingMethodWorker) in problem.message
    assert "/nonexistent/venv/bin/python" in problem.message
