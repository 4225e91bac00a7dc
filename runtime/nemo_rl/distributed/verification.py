"""Verify a resolved worker class where its actors will run, before any actor exists.

Two checks, each once per class (cached), never once per actor:
- the contract check (`verify_check`): in the driver's interpreter the class is imported
  in-process; in any other environment the same check runs as one CPU-only Ray task with
  that environment's interpreter;
- the actors' import check (`verify_actors_can_import`): the class's module must be
  findable by the process each actor will be: the actors' interpreter and runtime_env,
  on every node its bundles may land on; one zero-CPU Ray task per node. A module only on
  the driver's path passes the first check and fails this one.
Every run that actually executes records where it ran (interpreter, process, node) in the
report (`verification_report`); every rejection is a WorkerConfigError whose problems name
`<section>.worker_extension_cls_fqn`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contracts.init_call import InitCall
from nemo_rl_workers.checks.contract.contract_check import (
    ProblemFields,
    WorkerCheck,
    check_worker_class,
    plain,
)
from nemo_rl_workers.errors import Problem, raise_if_any
from nemo_rl_workers.model.registry import ActorEnvironment
from nemo_rl_workers.model.resolver import FIELD, Resolution

# A verification task in another environment may first have to start an interpreter that
# imports torch; a missing or broken interpreter must not hang the driver forever.
VERIFY_TIMEOUT_ENV = "NEMO_RL_VERIFY_TIMEOUT_S"
DEFAULT_VERIFY_TIMEOUT_S = 120.0

# The kinds of run in the report.
CONTRACT = "contract"
ACTORS_IMPORT = "actors-import"


@dataclass(frozen=True)
class Where:
    """The process a check ran in."""

    interpreter: str
    pid: int
    node: str

    @classmethod
    def here(cls) -> Where:
        return cls(sys.executable, os.getpid(), _node_here())

    def __str__(self) -> str:
        return f"{self.interpreter} (pid {self.pid}, node {self.node})"


@dataclass(frozen=True)
class VerificationRun:
    """One check that actually ran (a cache hit is not a run): what, where, and its verdict."""

    kind: str
    fqn: str
    where: Where
    passed: bool
    # Wall time of the check as the driver waited for it (task dispatch included) ...
    seconds: float = 0.0
    # ... and of the check alone, timed in the process where it ran.
    ran_s: float = 0.0


_lock = threading.Lock()
_cache: dict[tuple[str, ...], tuple[Problem, ...]] = {}
_report: list[VerificationRun] = []


def verification_runs() -> int:
    """How many contract checks actually ran (cache hits excluded) since the last clear."""
    return sum(1 for run in _report if run.kind == CONTRACT)


def verification_report() -> tuple[VerificationRun, ...]:
    """Every check that ran since the last clear, in order, with where it ran."""
    with _lock:
        return tuple(_report)


def clear_verification_cache() -> None:
    """Forget cached verdicts and the report (tests; or after installing a fixed package)."""
    with _lock:
        _cache.clear()
        _report.clear()


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


def checked_here(check: WorkerCheck) -> tuple[list[ProblemFields], Where, float]:
    """The contract check, stamped with the process it ran in (the driver, or a Ray task)
    and timed there."""
    start = time.perf_counter()
    fields = check_worker_class(check)
    return fields, Where.here(), time.perf_counter() - start


def verify_check(check: WorkerCheck, env: ActorEnvironment, *, node_id: str | None = None) -> None:
    """Run (or recall) one contract check; raise WorkerConfigError on any problem.

    `node_id`: where a non-driver environment's check runs (a node the actors will use);
    anywhere when None."""
    key = (
        CONTRACT,
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
            start = time.perf_counter()
            where: Where | None
            if env.is_driver:
                fields, where, ran_s = checked_here(check)
            else:
                fields, where, ran_s = _check_in_environment(check, env, node_id)
            cached = tuple(Problem(*f) for f in fields)
            _cache[key] = cached
            if where is not None:
                _report.append(VerificationRun(CONTRACT, check.fqn, where, not cached,
                                               time.perf_counter() - start, ran_s))
    raise_if_any(cached)


def verify_actors_can_import(
    fqn: str,
    section_path: str,
    runtime_env: Mapping[str, Any] | None,
    nodes: Sequence[str] = (),
) -> None:
    """Refuse, before any placement group, a class whose module the actors cannot find.

    Asks the process each actor will be (the actors' `runtime_env`, on each of `nodes`,
    the nodes its bundles may land on; every live node when none are given);
    the driver's own view does not count. Raises WorkerConfigError with one line per node
    that cannot find it, saying where it was importable and where not.
    """
    nodes = tuple(sorted(nodes)) or _live_nodes()
    key = (ACTORS_IMPORT, fqn, json.dumps(runtime_env or {}, sort_keys=True), *nodes)
    with _lock:
        cached = _cache.get(key)
        if cached is None:
            cached = _probe_actors(fqn, f"{section_path}.{FIELD}", runtime_env, nodes)
            _cache[key] = cached
    raise_if_any(cached)


def find_module_here(module: str) -> tuple[str | None, str, Where, float]:
    """(origin, or None when not found; why not; where asked; seconds), in this process."""
    import importlib.util

    start = time.perf_counter()
    try:
        spec = importlib.util.find_spec(module)
    except Exception as err:  # a parent package that fails to import, a bad name
        return None, f"{type(err).__name__}: {err}", Where.here(), time.perf_counter() - start
    if spec is None:
        why = f"no module named {module!r} on its path"
        return None, why, Where.here(), time.perf_counter() - start
    return spec.origin or "(namespace package)", "", Where.here(), time.perf_counter() - start


def _probe_actors(
    fqn: str, path: str, runtime_env: Mapping[str, Any] | None, nodes: tuple[str, ...]
) -> tuple[Problem, ...]:
    import ray
    from ray.exceptions import GetTimeoutError, RayError
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    module = fqn.rpartition(".")[0]
    timeout = _timeout_s()
    task = ray.remote(num_cpus=0, max_retries=0)(find_module_here)
    options: dict[str, Any] = {"runtime_env": dict(runtime_env)} if runtime_env else {}
    refs = [
        task.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False), **options
        ).remote(module)
        for node in nodes
    ]
    interpreter = (runtime_env or {}).get("py_executable", sys.executable)
    start = time.perf_counter()
    try:
        answers: list[tuple[str | None, str, Where, float]] = ray.get(refs, timeout=timeout)
    except (GetTimeoutError, RayError) as err:
        for ref in refs:
            ray.cancel(ref, force=True)
        return (Problem(
            path, "an actor environment that can be asked before allocation", interpreter,
            f"{path}={fqn}: asking the actors' environment ({interpreter}) whether it can "
            f"import {module} failed: {type(err).__name__}: {_last_line(str(err))}",
            rule="environment",
        ),)
    seconds = time.perf_counter() - start
    importable_at = _verified_where(fqn)
    problems: list[Problem] = []
    for origin, why, where, ran_s in answers:
        _report.append(
            VerificationRun(ACTORS_IMPORT, fqn, where, origin is not None, seconds, ran_s)
        )
        if origin is None:
            problems.append(Problem(
                path, f"a class its actors can import on node {where.node}", fqn,
                f"{path}={fqn} is importable in {importable_at} but not where its actors "
                f"run: {where.interpreter} on node {where.node} finds {why}; install it there "
                "or put it on the actors' path (runtime_env).",
                rule="import.actors",
            ))
    return tuple(problems)


def _verified_where(fqn: str) -> str:
    """Where the class was last imported by a contract check (the driver, if none ran)."""
    for run in reversed(_report):
        if run.kind == CONTRACT and run.fqn == fqn:
            return str(run.where)
    return f"the driver, {Where.here()}"


def _check_in_environment(
    check: WorkerCheck, env: ActorEnvironment, node_id: str | None = None
) -> tuple[list[ProblemFields], Where | None, float]:
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
                 "or fix its registration.", "environment")], None, 0.0
    timeout = _timeout_s()
    task = ray.remote(num_cpus=0, max_retries=0)(checked_here)
    options: dict[str, Any] = {"runtime_env": {"py_executable": executable}}
    if node_id is not None:
        options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
    ref = task.options(**options).remote(check)
    try:
        result: tuple[list[ProblemFields], Where, float] = ray.get(ref, timeout=timeout)
    except GetTimeoutError:
        ray.cancel(ref, force=True)
        return [(path, f"a worker environment that starts within {timeout:.0f}s", executable,
                 f"verifying {path}={check.fqn} in environment {env.name!r} ({executable}) did "
                 f"not finish within {timeout:.0f}s; check that the interpreter exists on every "
                 f"node and has nemo_rl installed (raise {VERIFY_TIMEOUT_ENV} if it is slow).",
                 "environment")], None, 0.0
    except RayError as err:
        return [(path, f"a working Python environment {env.name!r}", executable,
                 f"verifying {path}={check.fqn} in environment {env.name!r} ({executable}) "
                 f"failed: {type(err).__name__}: {_last_line(str(err))}", "environment")], None, 0.0
    return result


def _timeout_s() -> float:
    return float(os.environ.get(VERIFY_TIMEOUT_ENV, DEFAULT_VERIFY_TIMEOUT_S))


def _node_here() -> str:
    """This process's Ray node ID when connected to Ray (never importing it), else the host."""
    ray: Any = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return str(ray.get_runtime_context().get_node_id())
    return f"host:{socket.gethostname()}"


def _live_nodes() -> tuple[str, ...]:
    import ray

    nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]  # ray: unannotated
    return tuple(sorted(str(n["NodeID"]) for n in nodes if n.get("Alive")))


def _single_node_cluster() -> bool:
    import ray

    if not ray.is_initialized():
        return True  # the task would start a local cluster
    return len(_live_nodes()) <= 1


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text
