"""The check in the workers' own interpreter, once per class, before any worker actor.

One CPU-free Ray task (`num_cpus=0`) runs in the interpreter the tree's
`get_actor_python_env` answers for the class (as `py_executable` when it is not the
driver's own), imports the class and checks with the standard library alone (`inspect`)
that each method the constructing driver calls exists and accepts the call's shape
(its positional count and keywords). An import that fails there is the refusal: upstream's
initializer would fail the same way, after the placement group.

Where `beartype` and `contracts` import there, the class is then verified as our runtime
verifies a worker (`contracts.check`) against the revision's Protocol of the constructing
driver (`audit --emit-protocols`' text, from the guard's cached tree model, run there as a
module of its own; of a driver with several roles, the one whose default worker the live
class's MRO holds, picked there, so the task is sent before the class's source is
modelled in the driver): a violation on a method the driver always calls is a problem (one the
class alone cannot decide is not). Protocols that cannot be imported there (a name of the
tree they import fails), or a missing beartype or contracts, check nothing more.

A class is never held to more than the tree's own worker it extends (`stands_for`: the
driver's worker class sharing its nearest base, as the audit finds an extension's role):
a method the driver calls that that worker lacks, or cannot take the call with, is the
tree's own gap (the audit's finding), not the class's; of a class extending none of the
driver's workers, what any of them fails is not asked either (`driver_calls.missing_calls`
holds the source side to the same).

Where the answer is an interpreter upstream has still to build (`uv ...`: upstream makes
that virtual environment itself, inside `RayWorkerGroup`, after the placement groups) or a
path that does not exist here, nothing is checked (said as such in no sentence: the
verdict is a pass, never a claim). The task's function is sent by value (this module
imports only the standard library), so the workers' interpreter needs nothing of the tool.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

Call = tuple[str, int, tuple[str, ...] | None]  # method, positional count, keywords (None: open)
# (the default worker FQN of a role of the driver, its Protocol's name, the Protocol's
# module as the revision emits it): the class is judged against the one `chosen` picks.
Candidate = tuple[str, str, str]
# (a worker class the driver starts, the FQNs of its MRO, the methods the driver calls
# that it fails itself): what a class extending it is not asked (`stands_for`).
Base = tuple[str, tuple[str, ...], tuple[str, ...]]
Protocol = tuple[str, str]  # (the Protocol's module text, its name)
Problem = tuple[str, str, str]  # (rule, what is wrong, the method it is about or "")
IMPORT_RULE = "worker-interpreter"  # the class cannot be imported there
METHOD_RULE = "worker-method"  # a method the driver calls, as `inspect` finds it there
PROTOCOL_RULE = "worker-protocol"  # `contracts.check` against the revision's Protocol
PROTOCOLS_MODULE = "nemo_rl_workers_guard_protocols"  # what the text runs as, there
NOT_A_BASE = frozenset({"builtins.object", "object"})  # every class's: extends nothing
TIMEOUT_S = 120.0
Key = tuple[str, str, tuple[Call, ...], tuple[Candidate, ...], tuple[Base, ...]]
_checked: dict[Key, list[Problem]] = {}


def stands_for(mro: Sequence[str], bases: Sequence[Base]) -> list[Base]:
    """The driver's workers a class (its MRO's FQNs, itself first) extends: those sharing
    its nearest base (every one of a tie); none where it shares none."""
    best: int | None = None
    out: list[Base] = []
    for base in bases:
        theirs = set(base[1]) - NOT_A_BASE
        position = next((i for i, name in enumerate(mro[1:], 1) if name in theirs), None)
        if position is None:
            continue
        if best is None or position < best:
            best, out = position, [base]
        elif position == best:
            out.append(base)
    return out


def not_asked(mro: Sequence[str], bases: Sequence[Base]) -> set[str]:
    """The methods a class is not held to: what the tree's own workers it extends fail
    (any of a tie), else what any of the driver's workers fails."""
    extended = stands_for(mro, bases) or list(bases)
    return {method for base in extended for method in base[2]}


def probe(fqn: str, calls: Sequence[Call], candidates: Sequence[Candidate] = (),
          bases: Sequence[Base] = ()) -> list[Problem]:
    """Runs in the workers' interpreter: why the class cannot serve `calls` there (less
    what `not_asked` leaves to the tree), or fails the Protocol `chosen` picks of
    `candidates`."""
    import importlib
    import inspect

    module_name, _, name = fqn.rpartition(".")
    where = f"the workers' interpreter ({sys.executable})"
    try:
        module = importlib.import_module(module_name)
    except BaseException as error:  # noqa: BLE001 - what the workers would meet
        return [(IMPORT_RULE, f"cannot be imported in {where}: {type(error).__name__}: "
                              f"{error}", "")]
    cls = getattr(module, name, None)
    if cls is None:
        return [(IMPORT_RULE, f"is not defined in {where}: module {module_name} has no "
                              f"{name}", "")]
    target = getattr(cls, "__ray_actor_class__", cls)
    mro = [f"{c.__module__}.{c.__qualname__}" for c in getattr(target, "__mro__", ())]
    skipped = not_asked(mro, bases)
    absent = object()
    problems: list[Problem] = []
    for method, positional, keywords in calls:
        if method in skipped:
            continue
        function = getattr(target, method, absent)
        if not callable(function):
            bound = "" if function is absent else f" (it is a {type(function).__name__} there)"
            problems.append((METHOD_RULE, f"has no method {method} in {where}{bound}", method))
            continue
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            continue  # a builtin or a C function: not told, not claimed
        try:
            signature.bind(None, *([None] * positional),
                           **{k: None for k in (keywords or ())})
        except TypeError as error:
            problems.append((METHOD_RULE, f"{method}{signature} does not accept the "
                                          f"driver's call in {where} ({error})", method))
    protocol = chosen(target, candidates)
    if problems or protocol is None:
        return problems
    members = {method for method, _, _ in calls} - skipped
    return against_protocol(target, protocol, members, where)


def chosen(target: type, candidates: Sequence[Candidate]) -> Protocol | None:
    """The Protocol of the role whose default worker the class's MRO holds, else the
    driver's one Protocol; None where the driver has several and the class extends none."""
    ancestors = {f"{c.__module__}.{c.__qualname__}" for c in getattr(target, "__mro__", ())}
    extended = [(text, name) for worker, name, text in candidates if worker in ancestors]
    if extended:
        return extended[0]
    if len(candidates) == 1:
        return candidates[0][2], candidates[0][1]
    return None


def against_protocol(target: type, protocol: Protocol, members: set[str],
                     where: str) -> list[Problem]:
    """`contracts.check` of the class against the revision's Protocol, where beartype and
    contracts import: the violations on `members`. Only the Protocol's own class and the
    imports its annotations name are run; a name whose import fails there is `Any`."""
    import importlib
    import importlib.util

    if any(importlib.util.find_spec(name) is None for name in ("beartype", "contracts")):
        return []
    try:
        contracts: Any = importlib.import_module("contracts")
        with loaded_protocol(*protocol) as checked:
            report = contracts.check(target, checked)
    except Exception:  # noqa: BLE001 - the check cannot run there: not a verdict on the class
        return []
    return [(PROTOCOL_RULE, str(violation), str(violation.member))
            for violation in report.violations if violation.member in members]


@contextlib.contextmanager
def loaded_protocol(text: str, name: str) -> Generator[type]:
    """The Protocol class `name` of an emitted module `text`, run as a module of its own
    while the caller checks against it (its string annotations resolve there). Only the
    class and the imports its annotations name are run; a name whose import fails is
    `Any`. Raises what running the class raises."""
    import __future__

    import ast
    import types

    module = types.ModuleType(PROTOCOLS_MODULE)
    sys.modules[PROTOCOLS_MODULE] = module
    flags = __future__.annotations.compiler_flag
    try:
        body = ast.parse(text).body
        [cls] = [n for n in body if isinstance(n, ast.ClassDef) and n.name == name]
        used = {n.id for n in ast.walk(cls) if isinstance(n, ast.Name)}
        for node in body:
            if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
                continue
            wanted = [a for a in node.names if (a.asname or a.name) in used]
            if not wanted:
                continue
            try:
                one = ast.copy_location(ast.ImportFrom(node.module, wanted, node.level), node)
                code = compile(ast.Module([one], []), PROTOCOLS_MODULE, "exec")
                exec(code, module.__dict__)  # noqa: S102 - imports `check_emitted` let through
            except Exception:  # noqa: BLE001 - not importable there: the name is Any
                for alias in wanted:
                    module.__dict__[alias.asname or alias.name] = Any
        module.__dict__.setdefault("Any", Any)
        exec(compile(ast.Module([cls], []), PROTOCOLS_MODULE, "exec", flags=flags),  # noqa: S102
             module.__dict__)
        yield module.__dict__[name]
    finally:
        sys.modules.pop(PROTOCOLS_MODULE, None)


def interpreter_of(answer: object) -> str | None:
    """The interpreter to check in, or None where it cannot be checked before upstream
    builds it."""
    if not isinstance(answer, str) or not answer or answer.startswith("uv"):
        return None
    return answer if os.path.isfile(answer) and os.access(answer, os.X_OK) else None


@dataclass
class Pending:
    """The probe of one (class, interpreter, calls, Protocol): answered already in this
    process, or its task in flight (`ref`), submitted before the guard's other checks so
    that the worker process Ray starts for it overlaps them. A task whose answer is never
    asked for (the class was refused before) finishes on its own: it creates nothing."""

    key: Key
    ref: Any = None
    answer: list[Problem] | None = None  # known already: met before in this process

    def result(self) -> list[Problem]:
        if self.answer is None:
            self.answer = _checked.get(self.key)
        if self.answer is None:
            import ray

            got: Any = ray.get(self.ref, timeout=TIMEOUT_S)
            self.answer = _checked[self.key] = [(str(rule), str(line), str(method))
                                                for rule, line, method in got]
        return self.answer


def start(fqn: str, python: str, calls: Sequence[Call],
          candidates: Sequence[Candidate] = (), bases: Sequence[Base] = ()) -> Pending:
    """Submit the probe (once per key in this process)."""
    key = (fqn, python, tuple(calls), tuple(candidates), tuple(bases))
    if key in _checked:
        return Pending(key, answer=_checked[key])
    import ray
    from ray import cloudpickle

    pickler: Any = cloudpickle  # Ray's vendored cloudpickle is untyped
    pickler.register_pickle_by_value(sys.modules[__name__])
    options: dict[str, Any] = {"num_cpus": 0, "max_retries": 0}
    if os.path.realpath(python) != os.path.realpath(sys.executable):
        options["runtime_env"] = {"py_executable": python}
    task: Any = ray.remote(probe).options(**options)
    return Pending(key, task.remote(fqn, list(calls), list(candidates), list(bases)))


def check_in_workers(fqn: str, python: str, calls: Sequence[Call],
                     candidates: Sequence[Candidate] = (),
                     bases: Sequence[Base] = ()) -> list[Problem]:
    """The probe's problems, run once per (class, interpreter, calls, Protocols, bases)
    in this process."""
    return start(fqn, python, calls, candidates, bases).result()
