"""The one pre-allocation order every entry point follows (Policy, VllmGeneration, the CLI).

    1. R0: fold the deprecated `Policy(worker_extension_cls_fqn=...)` argument into the
       section (DeprecationWarning at the caller; a conflicting config value is a problem).
    2. `outdated_config_problems`: renamed or removed keys (dtensor_cfg, _v2, backends).
    3. `preflight_problems`: config rules that need the cluster's world size.
    4. The resolver: which class runs the section (R1-R7).
       Problems of steps 1-4 are collected and raised together, as one WorkerConfigError.
    5. The cluster's fit (`check_cluster`, the caller's `RayVirtualCluster.check_fit`): a
       pure verdict over the live nodes' resources, so a cluster that can never hold the
       workers is refused in milliseconds, before the worker class is imported.
    6. Contract verification in the class's own environment (Protocol, base class,
       constructor call, the worker's own preflight such as an unknown quant_cfg).
    7. Only then may the caller allocate (placement groups, actors), and only after that
       succeeded does `WorkerPlan.commit()` write the resolved FQN back into the caller's
       config, so a rejected or failed start leaves the config exactly as it was.

Warnings (R3's automatic quantized worker, preflight advice) are emitted once checks 1-6
passed, as UserWarning pointing at the user's line, not at this module.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from contracts.init_call import InitCall
from nemo_rl.distributed.verification import verify_worker_class
from nemo_rl_workers.checks.contract.contract_check import plain
from nemo_rl_workers.errors import Problem, WorkerConfigError, raise_if_any
from nemo_rl_workers.model.config_rules import config_rules, merge_problems
from nemo_rl_workers.model.keys import generation_key_problems
from nemo_rl_workers.model.registry import WorkerRegistry
from nemo_rl_workers.model.resolver import (
    FIELD,
    Resolution,
    apply_resolution,
    resolve_generation,
    resolve_policy,
)
from nemo_rl_workers.model.sections import as_mapping, section_problem
from nemo_rl_workers.reading.origin import problems_located

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# Modules of the package that are user code for warning purposes (they call the API).
_USER_MODULES = frozenset({os.path.join(_PACKAGE_DIR, "demo.py")})


@dataclass
class WorkerPlan:
    """A section that passed steps 1-6: what to allocate, and how to commit it."""

    resolution: Resolution
    # A plain deep copy of the section with the resolved FQN set: what workers receive.
    section: dict[str, Any]
    target: Mapping[str, Any] | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def fqn(self) -> str:
        return self.resolution.fqn

    def commit(self) -> None:
        """Step 7, after allocation succeeded: write the resolved FQN back (R3 silence)."""
        if isinstance(self.target, MutableMapping):
            apply_resolution(self.target, self.resolution)


def user_stacklevel() -> int:
    """The `stacklevel` that makes warnings.warn point at the first frame outside nemo_rl."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(_PACKAGE_DIR) or name in _USER_MODULES:
            return level
        frame = frame.f_back
        level += 1
    return level


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """Emit a warning attributed to the user's line (the first frame outside nemo_rl)."""
    warnings.warn(message, category, stacklevel=user_stacklevel())


def plan_policy(
    config: object,
    *,
    path: str = "policy",
    world_size: int | None,
    init_call: InitCall,
    constructor_fqn: str | None = None,
    registry: WorkerRegistry | None = None,
    check_cluster: Callable[[], None] | None = None,
) -> WorkerPlan:
    """Steps 1-6 for a policy (or teacher) section at `path`; raises WorkerConfigError
    (or what `check_cluster` raises: ClusterAllocationError).

    Its problems name the file and line of a section that came from `load_config`.
    """
    with problems_located(config, path):
        return _plan_policy(config, path, world_size, init_call, constructor_fqn, registry,
                            check_cluster)


def _plan_policy(
    config: object,
    path: str,
    world_size: int | None,
    init_call: InitCall,
    constructor_fqn: str | None,
    registry: WorkerRegistry | None,
    check_cluster: Callable[[], None] | None,
) -> WorkerPlan:
    section = _section(config, path)
    rules = config_rules({}, world_size=world_size, sections=[(path, section)])
    problems = list(rules.problems)
    resolution: Resolution | None = None
    try:
        # Step 1 happens here: the resolver folds the constructor argument in (R0).
        resolution = resolve_policy(
            section, path=path, constructor_fqn=constructor_fqn, registry=registry
        )
    except WorkerConfigError as err:
        merge_problems(problems, err.problems)
    raise_if_any(problems)
    assert resolution is not None
    return _verified(resolution, section, config, init_call, rules.warnings, check_cluster)


def plan_generation(
    config: object,
    *,
    path: str = "policy.generation",
    world_size: int | None,
    init_call: InitCall,
    registry: WorkerRegistry | None = None,
    check_cluster: Callable[[], None] | None = None,
) -> WorkerPlan:
    """Steps 4-6 for a vLLM generation section; raises WorkerConfigError (or what
    `check_cluster` raises).

    Steps 2 and 3 are rules over policy sections (they cover `<policy>.generation` too),
    so they run with the policy, not here. Problems are located as in `plan_policy`.
    """
    with problems_located(config, path):
        return _plan_generation(config, path, init_call, registry, check_cluster)


def _plan_generation(
    config: object, path: str, init_call: InitCall, registry: WorkerRegistry | None,
    check_cluster: Callable[[], None] | None,
) -> WorkerPlan:
    section = _section(config, path)
    problems: list[Problem] = generation_key_problems(section, path)
    resolution: Resolution | None = None
    try:
        resolution = resolve_generation(section, path=path, registry=registry)
    except WorkerConfigError as err:
        merge_problems(problems, err.problems)
    if resolution is None and not problems:
        backend = section.get("backend")
        problems.append(
            Problem(f"{path}.backend", "'vllm'", str(backend),
                    f"{path}.backend is {backend!r}, but VllmGeneration runs only backend "
                    "'vllm'.", rule="backend")
        )
    raise_if_any(problems)
    assert resolution is not None
    return _verified(resolution, section, config, init_call, [], check_cluster)


def _section(config: object, path: str) -> Mapping[str, Any]:
    section = as_mapping(config)
    if section is None:
        problem = section_problem(config, path)
        assert problem is not None
        raise WorkerConfigError([problem])
    return section


def _verified(
    resolution: Resolution,
    section: Mapping[str, Any],
    target: object,
    init_call: InitCall,
    advice: list[str],
    check_cluster: Callable[[], None] | None,
) -> WorkerPlan:
    effective: dict[str, Any] = plain(section)
    effective[FIELD] = resolution.fqn
    # Step 5: a cluster that can never hold the workers is refused before the class's
    # module (and torch with it) is imported.
    if check_cluster is not None:
        check_cluster()
    # Step 6: in the class's environment, once per class.
    verify_worker_class(resolution, effective, role_init=init_call)
    texts = (*resolution.warnings, *advice)
    for text in texts:
        warn_at_caller(text, UserWarning)
    mapping = target if isinstance(target, Mapping) else None
    return WorkerPlan(resolution, effective, mapping, texts)
