"""The check in the workers' own interpreter, once per class, before any worker actor.

One CPU-free Ray task (`num_cpus=0`) runs in the interpreter the tree's
`get_actor_python_env` answers for the class (as `py_executable` when it is not the
driver's own), imports the class and checks with the standard library alone (`inspect`)
that each method the constructing driver calls exists and accepts the call's shape
(its positional count and keywords). An import that fails there is the refusal: upstream's
initializer would fail the same way, after the placement group.

Where the answer is an interpreter upstream has still to build (`uv ...`: upstream makes
that virtual environment itself, inside `RayWorkerGroup`, after the placement groups) or a
path that does not exist here, nothing is checked (said as such in no sentence: the
verdict is a pass, never a claim). The task's function is sent by value (this module
imports only the standard library), so the workers' interpreter needs nothing of the tool.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

Call = tuple[str, int, tuple[str, ...] | None]  # method, positional count, keywords (None: open)
TIMEOUT_S = 120.0
_checked: dict[tuple[str, str, tuple[Call, ...]], list[str]] = {}


def probe(fqn: str, calls: Sequence[Call]) -> list[str]:
    """Runs in the workers' interpreter: why the class cannot serve `calls` there."""
    import importlib
    import inspect

    module_name, _, name = fqn.rpartition(".")
    where = f"the workers' interpreter ({sys.executable})"
    try:
        module = importlib.import_module(module_name)
    except BaseException as error:  # noqa: BLE001 - what the workers would meet
        return [f"cannot be imported in {where}: {type(error).__name__}: {error}"]
    cls = getattr(module, name, None)
    if cls is None:
        return [f"is not defined in {where}: module {module_name} has no {name}"]
    target = getattr(cls, "__ray_actor_class__", cls)
    problems = []
    for method, positional, keywords in calls:
        function = getattr(target, method, None)
        if function is None:
            problems.append(f"has no method {method} in {where}")
            continue
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            continue  # a builtin or a C function: not told, not claimed
        try:
            signature.bind(None, *([None] * positional),
                           **{k: None for k in (keywords or ())})
        except TypeError as error:
            problems.append(f"{method}{signature} does not accept the driver's call "
                            f"({error})")
    return problems


def interpreter_of(answer: object) -> str | None:
    """The interpreter to check in, or None where it cannot be checked before upstream
    builds it."""
    if not isinstance(answer, str) or not answer or answer.startswith("uv"):
        return None
    return answer if os.path.isfile(answer) and os.access(answer, os.X_OK) else None


def check_in_workers(fqn: str, python: str, calls: Sequence[Call]) -> list[str]:
    """The probe's problems, run once per (class, interpreter, calls) in this process."""
    key = (fqn, python, tuple(calls))
    if key in _checked:
        return _checked[key]
    import ray
    from ray import cloudpickle

    pickler: Any = cloudpickle  # Ray's vendored cloudpickle is untyped
    pickler.register_pickle_by_value(sys.modules[__name__])
    options: dict[str, Any] = {"num_cpus": 0, "max_retries": 0}
    if os.path.realpath(python) != os.path.realpath(sys.executable):
        options["runtime_env"] = {"py_executable": python}
    task: Any = ray.remote(probe).options(**options)
    answer: Any = ray.get(task.remote(fqn, list(calls)), timeout=TIMEOUT_S)
    found = [str(line) for line in answer]
    _checked[key] = found
    return found
