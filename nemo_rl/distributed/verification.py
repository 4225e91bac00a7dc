"""Verify a resolved worker class in its own Python environment, before any actor exists.

In the driver's interpreter the class is imported in-process; in any other environment the
same check runs as one CPU-only Ray task with that environment's interpreter. Either way it
runs once per (class, contract, base, constructor call, section), not once per actor, and
every rejection is a WorkerConfigError whose problems name `<section>.worker_extension_cls_fqn`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from typing import Any

from contracts.init_call import InitCall
from nemo_rl.errors import Problem, raise_if_any
from nemo_rl.workers.contract_check import ProblemFields, WorkerCheck, check_worker_class, plain
from nemo_rl.workers.registry import ActorEnvironment
from nemo_rl.workers.resolver import Resolution

# A verification task in another environment may first have to start an interpreter that
# imports torch; a missing or broken interpreter must not hang the driver forever.
VERIFY_TIMEOUT_ENV = "NEMO_RL_VERIFY_TIMEOUT_S"
DEFAULT_VERIFY_TIMEOUT_S = 120.0

_lock = threading.Lock()
_cache: dict[tuple[str, ...], tuple[Problem, ...]] = {}
_runs = 0


def verification_runs() -> int:
    """How many verifications actually ran (cache hits excluded) in this process."""
    return _runs


def clear_verification_cache() -> None:
    """Forget cached verdicts (tests; or after installing a fixed worker package)."""
    global _runs
    with _lock:
        _cache.clear()
        _runs = 0


def verify_worker_class(
    resolution: Resolution, config_section: Mapping[str, Any], *, role_init: InitCall
) -> None:
    """Check the resolved class against its Protocol (and base, and constructor call)."""
    check = WorkerCheck(
        fqn=resolution.fqn,
        protocol=resolution.protocol,
        base_fqn=resolution.base_fqn,
        init_call=role_init,
        section_path=resolution.section,
        section=plain(config_section),
    )
    verify_check(check, resolution.env)


def verify_check(check: WorkerCheck, env: ActorEnvironment, *, node_id: str | None = None) -> None:
    """Run (or recall) one verification; raise WorkerConfigError on any problem.

    `node_id`: where a non-driver environment's check runs (a node the actors will use);
    anywhere when None."""
    global _runs
    key = (
        check.fqn,
        check.protocol,
        check.base_fqn or "",
        repr(check.init_call),
        env.name,
        env.python,
        check.section_path,
        json.dumps(check.section, sort_keys=True, default=repr),
    )
    with _lock:
        cached = _cache.get(key)
        if cached is None:
            _runs += 1
            if env.is_driver:
                fields = check_worker_class(check)
            else:
                fields = _check_in_environment(check, env, node_id)
            cached = tuple(Problem(*f) for f in fields)
            _cache[key] = cached
    raise_if_any(cached)


def _check_in_environment(
    check: WorkerCheck, env: ActorEnvironment, node_id: str | None = None
) -> list[ProblemFields]:
    """One CPU-only Ray task in the class's environment; bounded by a timeout."""
    import ray
    from ray.exceptions import GetTimeoutError, RayError
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    path = check.field_path
    executable = env.python
    if _single_node_cluster() and not os.access(executable, os.X_OK):
        return [(path, f"an executable Python interpreter for environment {env.name!r}",
                 executable,
                 f"{path}={check.fqn} runs in environment {env.name!r}, whose interpreter "
                 f"{executable} does not exist or is not executable; install the environment "
                 "or fix its registration.", "environment")]
    timeout = float(os.environ.get(VERIFY_TIMEOUT_ENV, DEFAULT_VERIFY_TIMEOUT_S))
    task = ray.remote(num_cpus=0, max_retries=0)(check_worker_class)
    options: dict[str, Any] = {"runtime_env": {"py_executable": executable}}
    if node_id is not None:
        options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
    ref = task.options(**options).remote(check)
    try:
        result: list[ProblemFields] = ray.get(ref, timeout=timeout)
    except GetTimeoutError:
        ray.cancel(ref, force=True)
        return [(path, f"a worker environment that starts within {timeout:.0f}s", executable,
                 f"verifying {path}={check.fqn} in environment {env.name!r} ({executable}) did "
                 f"not finish within {timeout:.0f}s; check that the interpreter exists on every "
                 f"node and has nemo_rl installed (raise {VERIFY_TIMEOUT_ENV} if it is slow).",
                 "environment")]
    except RayError as err:
        return [(path, f"a working Python environment {env.name!r}", executable,
                 f"verifying {path}={check.fqn} in environment {env.name!r} ({executable}) "
                 f"failed: {type(err).__name__}: {_last_line(str(err))}", "environment")]
    return result


def _single_node_cluster() -> bool:
    import ray

    if not ray.is_initialized():
        return True  # the task would start a local cluster
    nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]  # ray: unannotated
    return len([n for n in nodes if n.get("Alive")]) <= 1


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text
