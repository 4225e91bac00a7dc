"""The post-import hooks on upstream's `nemo_rl.distributed.worker_groups`.

`on_worker_groups(module)` runs once, right after the user's program imported that
module (`startup`'s finder), and wraps (wrapt function wrappers; upstream's source is
never changed):
- `RayWorkerGroup.__init__`: the builder's class is judged before the original runs, so a
  refusal comes before upstream creates the group's placement groups (the cluster's, on
  first `get_placement_groups()`) or any actor: from source and the live registry, its own
  code against the tree, what the constructing driver calls, then the task in the
  workers' interpreter (submitted first, so that the others overlap it); after it, the
  group's actors are recorded for the notes;
- its `run_*` methods: a name no worker has gets the "no worker ran it" note;
- `ray.get`: an error raised by an actor of a guarded group gets the call's note (most
  upstream call sites collect results with a plain `ray.get`; `MultiWorkerFuture.get_results`
  and `get_all_worker_results` call it too).

Upstream's objects are typed `Any`: they are the user's NeMo-RL, imported dynamically.
A failure of the guard itself fails open (`fail_open`).
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

from nemo_rl_workers.guard import PREFIX
from nemo_rl_workers.guard.fail_open import fail_open

RUN_METHODS = (
    "run_single_worker_single_data",
    "run_all_workers_multiple_data",
    "run_all_workers_single_data",
    "run_all_workers_sharded_data",
)
REGISTRY_MODULE = "nemo_rl.distributed.ray_actor_environment_registry"
_GROUP_ATTR = "_nemo_rl_workers_guard"
_ray_get_wrapped = False

Wrapped = Callable[..., Any]


def on_worker_groups(module: types.ModuleType) -> None:
    """Wrap upstream's worker group; fails open."""
    try:
        import wrapt

        group_class = module.RayWorkerGroup
        wrapt.wrap_function_wrapper(module, "RayWorkerGroup.__init__", _init)
        for name in RUN_METHODS:
            if hasattr(group_class, name):
                wrapt.wrap_function_wrapper(module, f"RayWorkerGroup.{name}", _run)
        ray = sys.modules.get("ray")
        global _ray_get_wrapped
        if ray is not None and not _ray_get_wrapped:
            wrapt.wrap_function_wrapper(ray, "get", _get)
            _ray_get_wrapped = True
    except Exception as error:  # noqa: BLE001 - fail open
        fail_open("cannot hook nemo_rl.distributed.worker_groups", error)


def _argument(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int,
              name: str) -> Any:
    return args[index] if len(args) > index else kwargs.get(name)


def _caller() -> str:
    """file:line of the code that constructs the group (past the wrappers' frames)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return "an unknown caller"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _get_actor_python_env() -> Callable[[str], object] | None:
    registry = sys.modules.get(REGISTRY_MODULE)
    found = getattr(registry, "get_actor_python_env", None)
    return found if callable(found) else None


def _placement_groups_before(cluster: Any) -> int:
    """How many placement groups the cluster made before this group (read, not made):
    `RayVirtualCluster` keeps them in `_node_placement_groups` (the 2025-09 and 2026-08
    trees alike), None until its first `get_placement_groups()`."""
    made = getattr(cluster, "_node_placement_groups", None)
    return len(made) if isinstance(made, list) else 0


def judge(fqn: str, cluster: Any, where: str, name: str) -> None:
    """Raise WorkerContractError when the class is refused. The collector is paused while
    the guard models the class and its tree (as the tool's every model build is,
    `tree.source.gc_pause`): the syntax trees it parses and drops would otherwise be
    promoted while alive and make a full collection over the user's whole heap due."""
    from nemo_rl_workers.tree.source.gc_pause import collector_paused

    with collector_paused():
        _judge(fqn, cluster, where, name)


def _judge(fqn: str, cluster: Any, where: str, name: str) -> None:
    from nemo_rl_workers.guard import judgement
    from nemo_rl_workers.tree.source import ImportRoots

    nemo_rl = sys.modules.get("nemo_rl")
    own = judgement.own_root_of(getattr(nemo_rl, "__file__", None))
    index = judgement.source_model(ImportRoots.of_this_interpreter())
    if judgement.own_class(fqn, index, own):
        return  # upstream's own classes are never refused, at any release
    driver = None
    if own is not None:
        from nemo_rl_workers.guard import driver_calls

        driver = driver_calls.driver_on_stack(sys._getframe(2), own)
    try:  # in flight during the checks below
        pending = _start_worker_check(fqn, driver, own)
    except Exception:  # noqa: BLE001 - met again, in order, where its verdict is asked
        pending = None
    verdict = judgement.judge_source(fqn, index, own)
    if not verdict.refused:
        verdict = judgement.judge_environment(
            fqn, _get_actor_python_env(), None if own is None else os.path.dirname(own))
    if not verdict.refused and own is not None:
        verdict = _own_code_verdict(fqn, own)
    if not verdict.refused and own is not None and driver is not None:
        verdict, where = _driver_verdict(fqn, driver, own, where)
    if not verdict.refused:
        verdict = worker_verdict(fqn, driver, own, pending)
    if not verdict.refused:
        return
    earlier = _placement_groups_before(cluster)
    before = ("before any placement group or actor of it exists" if earlier == 0 else
              f"before any actor of it exists (the cluster's {earlier} placement "
              "group(s) existed already)")
    group = f" {name!r}" if name else ""
    raise judgement.WorkerContractError(
        fqn, verdict.rule,
        f"{PREFIX}: refused RayWorkerGroup{group} at {where}, {before}: {fqn} "
        f"{verdict.what} (rule {verdict.rule}); fix: {verdict.fix}.")


def _own_code_verdict(fqn: str, own: str) -> Any:
    """The class's own code against the tree: overrides vs its bases' calls, and vLLM's
    attribute-clash rule for an extension it hands vLLM."""
    from pathlib import Path

    from nemo_rl_workers.guard import class_rules, judgement
    from nemo_rl_workers.guard.class_model import class_model

    tree_root = str(Path(own).parent)
    model = class_model(fqn, tree_root)
    findings = class_rules.override_findings(model, fqn)
    name = fqn.rpartition(".")[2]
    if findings:
        return judgement.Verdict(
            "overrides-fit-bases", class_rules.override_sentence(findings),
            f"give {name}'s override the parameters its base's call passes (or take "
            f"**kwargs), and call only what its MRO defines; in CI, `nemo-rl-workers audit "
            f"--nemo-rl TREE --path DIR {fqn}` finds it")
    handed = class_rules.vllm_clashes(model, fqn, tree_root)
    if handed:
        return judgement.Verdict(
            "vllm-extension-clash", class_rules.clash_sentence(handed),
            f"rename those attributes of {handed[0].extension}")
    return judgement.PASS


def _driver_verdict(fqn: str, driver: Any, own: str, where: str) -> tuple[Any, str]:
    """The audit's verdicts on what the constructing driver calls; (verdict, where)."""
    from nemo_rl_workers.guard import driver_calls, judgement

    findings = driver_calls.missing_calls(fqn, driver, own)
    if not findings:
        return judgement.PASS, where
    return judgement.Verdict(
        driver_calls.RULE, driver_calls.sentence_of(findings, driver),
        f"give {fqn.rpartition('.')[2]} those methods with the signatures the driver calls "
        f"(subclass the tree's own worker of {driver.name}, or add them); in CI, "
        f"`nemo-rl-workers audit --nemo-rl TREE --path DIR {fqn}` finds it"), driver.where


def _start_worker_check(fqn: str, driver: Any, own: str | None,
                        provisional: bool = True) -> Any:
    """The check in the workers' own interpreter (one Ray task, once per class), submitted;
    None where it is not run (no Ray, an interpreter upstream builds later) or cannot be
    started yet (it is then started, or its failure met, where its verdict is asked).
    `provisional`: sent with the tree's model as last stored, before its key is computed
    (`driver_model.provisional_model`); `worker_verdict` holds it to the verified one."""
    from nemo_rl_workers.guard import worker_check

    ray = sys.modules.get("ray")
    answer_of = _get_actor_python_env()
    if ray is None or not ray.is_initialized() or answer_of is None:
        return None
    try:
        python = worker_check.interpreter_of(answer_of(fqn))
    except Exception:  # noqa: BLE001 - unregistered: `judge_environment` says so
        return None
    if python is None:
        return None  # upstream builds that interpreter later: not checked here
    calls: list[worker_check.Call] = []
    protocols: tuple[worker_check.Candidate, ...] = ()
    bases: tuple[worker_check.Base, ...] = ()
    if driver is not None and own is not None:
        from pathlib import Path

        from nemo_rl_workers.guard import driver_calls, driver_model

        model = driver_model.provisional_model(str(Path(own).parent)) if provisional \
            else None
        calls = driver_calls.calls_of(driver, own, model)
        protocols = driver_calls.protocols_of(driver, own, model)
        bases = driver_calls.bases_for(driver, own, model)
    return worker_check.start(fqn, python, calls, protocols, bases)


def worker_verdict(fqn: str, driver: Any, own: str | None, pending: Any) -> Any:
    """The verdict of the check in the workers' interpreter, on the verified model's
    calls and Protocols (the task is sent again where the provisional model's differ)."""
    from nemo_rl_workers.guard import judgement, worker_check

    if pending is None or (driver is not None and own is not None
                           and pending.key[2:] != _verified_inputs(driver, own)):
        # Not started yet, or started on a model the tree has left since: sent again.
        pending = _start_worker_check(fqn, driver, own, provisional=False)
    if pending is None:
        return judgement.PASS
    problems = pending.result()
    if not problems:
        return judgement.PASS
    python = pending.key[1]
    rule = problems[0][0]
    lines = [line for kind, line, _ in problems if kind == rule]
    if rule == worker_check.METHOD_RULE and driver is not None and own is not None:
        return method_verdict(fqn, driver, own, problems[0])
    if rule == worker_check.PROTOCOL_RULE:
        return judgement.Verdict(
            rule, f"fails the check against the revision's Protocol of what the driver "
            f"{driver.name} calls, with contracts in the workers' interpreter ({python}): "
            + "; ".join(lines),
            f"give {fqn.rpartition('.')[2]} the signatures of that Protocol (`nemo-rl-workers "
            "audit --nemo-rl TREE --emit-protocols OUT.py` writes it, for CI's type checkers)")
    return judgement.Verdict(
        rule, "; ".join(lines),
        "make the class's module and what it imports importable in that interpreter, or "
        "register the environment that has them")


def method_verdict(fqn: str, driver: Any, own: str, problem: tuple[str, str, str]) -> Any:
    """A method the driver calls, as the workers' interpreter found it: where the class's
    source on the driver's path has that method, the two interpreters disagree (said as
    such); where it does not (no class of its MRO defines it, or one binds the name to
    something else), the class lacks it, wherever it is imported: said with where the
    driver calls it and which base of the tree defines it."""
    from nemo_rl_workers.guard import driver_calls, judgement

    rule, line, method = problem
    name = fqn.rpartition(".")[2]
    kind, owner, where = driver_calls.binding_in_source(fqn, method, own)
    if kind == "method":
        return judgement.Verdict(
            rule, f"{line}, though its source on the driver's path defines it ({where}): "
                  "the workers import another version of the class or its bases",
            "make the workers' interpreter import the same code as the driver (the same "
            "version of the class's package and of NeMo-RL on its path), or register the "
            "environment that has it")
    called = driver_calls.call_of(driver, method, own)
    at = f" at {called[0]} ({called[1]})" if called is not None else ""
    lacks = (f"has no method {method}, which the driver {driver.name} calls on its "
             f"workers{at}")
    if kind == "unknown":  # its source cannot tell: what the workers' interpreter found
        return judgement.Verdict(
            rule, f"{line}; the driver {driver.name} calls it on its workers{at}",
            f"define {name}.{method} with the parameters the driver's call passes, or make "
            "the workers' interpreter import the same code as the driver")
    below = driver_calls.defined_below(fqn, method, own)
    hidden = f", hiding {below[0]}.{method} ({below[1]})" if below is not None else ""
    if kind == "attribute":  # bound, in the source too, to what is not a method
        return judgement.Verdict(
            driver_calls.RULE, f"{lacks}: {owner} binds {method} to a value that is not a "
                               f"method ({where}){hidden}",
            f"do not bind {method} in {owner.rpartition('.')[2]}, or make it a method that "
            "takes the driver's call")
    return judgement.Verdict(
        driver_calls.RULE, f"{lacks}: no class of its MRO defines it",
        f"define {name}.{method} with the parameters the driver's call passes")


def _verified_inputs(driver: Any, own: str) -> tuple[Any, Any, Any]:
    from nemo_rl_workers.guard import driver_calls

    return (tuple(driver_calls.calls_of(driver, own)),
            tuple(driver_calls.protocols_of(driver, own)),
            tuple(driver_calls.bases_for(driver, own)))


def _init(wrapped: Wrapped, instance: Any, args: tuple[Any, ...],
          kwargs: dict[str, Any]) -> Any:
    from nemo_rl_workers.guard.judgement import WorkerContractError

    fqn: object = None
    try:
        cluster = _argument(args, kwargs, 0, "cluster")
        builder = _argument(args, kwargs, 1, "remote_worker_builder")
        name = _argument(args, kwargs, 3, "name_prefix") or ""
        fqn = getattr(builder, "ray_actor_class_fqn", None)
        if isinstance(fqn, str):
            judge(fqn, cluster, _caller(), str(name))
        else:
            fail_open(f"the worker builder has no class name ({type(builder).__name__})")
    except WorkerContractError:
        raise
    except Exception as error:  # noqa: BLE001 - fail open: a bug of the guard
        fail_open(f"could not judge {fqn if isinstance(fqn, str) else 'the class'}", error)
    result = wrapped(*args, **kwargs)
    try:
        _record(instance, fqn if isinstance(fqn, str) else "")
    except Exception as error:  # noqa: BLE001 - fail open
        fail_open("cannot record the group's workers for the call notes", error)
    return result


def _record(group: Any, fqn: str) -> None:
    from nemo_rl_workers.guard.notes import MEMBERS, actor_hex

    workers = list(getattr(group, "_workers", []) or [])
    ids = [actor_hex(w) for w in workers]
    name = str(getattr(group, "name_prefix", "") or "")
    MEMBERS.add_group([i or "" for i in ids], name, fqn)
    setattr(group, _GROUP_ATTR, (name, fqn))


def _run(wrapped: Wrapped, instance: Any, args: tuple[Any, ...],
         kwargs: dict[str, Any]) -> Any:
    try:
        return wrapped(*args, **kwargs)
    except AttributeError as error:
        try:
            from nemo_rl_workers.guard.notes import note_no_worker

            method = _argument(args, kwargs, 0, "method_name")
            recorded = getattr(instance, _GROUP_ATTR, None)
            workers = list(getattr(instance, "_workers", []) or [])
            if isinstance(method, str) and recorded is not None and workers \
                    and not any(hasattr(w, method) for w in workers):
                note_no_worker(error, method, recorded[0], recorded[1], wrapped.__name__)
        except Exception as bug:  # noqa: BLE001 - fail open: the user's error stands
            print(f"{PREFIX}: cannot note the failed call ({type(bug).__name__}: {bug})",
                  file=sys.stderr)
        raise


def _get(wrapped: Wrapped, instance: Any, args: tuple[Any, ...],
         kwargs: dict[str, Any]) -> Any:
    del instance
    try:
        return wrapped(*args, **kwargs)
    except Exception as error:
        try:
            from nemo_rl_workers.guard.notes import note_task_error

            note_task_error(error)
        except Exception as bug:  # noqa: BLE001 - fail open: the user's error stands
            print(f"{PREFIX}: cannot note the failed call ({type(bug).__name__}: {bug})",
                  file=sys.stderr)
        raise
