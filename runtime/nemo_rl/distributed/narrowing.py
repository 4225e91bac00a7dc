"""Verify a running group's class against one more Protocol, for `RayWorkerGroup.narrow`.

The class was verified against its resolved contract before its actors existed; narrowing
to a Protocol that contract does not include checks the class against that Protocol too,
in the class's own environment (in-process for the driver's, otherwise one CPU-only Ray
task with the environment's interpreter), once per (class, Protocol, environment).
A failure is `contracts.ContractError` with every violation, raised in the driver.
"""

from __future__ import annotations

import os
import threading

from nemo_rl.distributed.verification import DEFAULT_VERIFY_TIMEOUT_S, VERIFY_TIMEOUT_ENV
from nemo_rl_workers.model.protocols import protocol_ref
from nemo_rl_workers.model.registry import ActorEnvironment

_lock = threading.Lock()
_passed: set[tuple[str, str, str, str]] = set()
_runs = 0


def verify_narrowing(fqn: str, protocol: type, env: ActorEnvironment) -> None:
    """Raise ContractError unless the class `fqn` implements `protocol` (cached on success)."""
    global _runs
    ref = protocol_ref(protocol)
    key = (fqn, ref, env.name, env.python)
    with _lock:
        if key in _passed:
            return
        _runs += 1
        if env.is_driver:
            verify_by_reference(fqn, ref)
        else:
            _verify_in(env, fqn, ref)
        _passed.add(key)


def verify_by_reference(fqn: str, ref: str) -> None:
    """Import the class and the Protocol where this runs; `contracts.verify` them."""
    from contracts import verify
    from nemo_rl_workers.checks.contract.contract_check import import_class
    from nemo_rl_workers.model.protocols import load_protocol

    cls, problem = import_class(fqn, "worker", "a class")
    protocol, unknown = load_protocol(ref)
    if cls is None or protocol is None:
        raise ImportError(problem[3] if problem is not None else unknown)
    verify(cls, protocol)


def _verify_in(env: ActorEnvironment, fqn: str, ref: str) -> None:
    import ray
    from ray.exceptions import RayTaskError

    timeout = float(os.environ.get(VERIFY_TIMEOUT_ENV, DEFAULT_VERIFY_TIMEOUT_S))
    task = ray.remote(num_cpus=0, max_retries=0)(verify_by_reference)
    ref_ = task.options(runtime_env={"py_executable": env.python}).remote(fqn, ref)
    try:
        ray.get(ref_, timeout=timeout)
    except RayTaskError as err:  # the task's own ContractError or ImportError, unwrapped
        cause = err.cause
        raise (cause if isinstance(cause, Exception) else err) from None


def narrowing_checks() -> int:
    """How many narrowing checks actually ran (cache hits and included Protocols excluded)."""
    return _runs
