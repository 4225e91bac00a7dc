"""Well-formedness of a worker FQN, judged from the string alone (nothing is imported)."""

from __future__ import annotations

import keyword

from nemo_rl_workers.errors import Problem, show

FQN_SHAPE = "a dotted name 'package.module.ClassName' of Python identifiers"


def fqn_problem(value: object, path: str) -> Problem | None:
    """Why `value` at `path` is not a usable worker FQN, or None if it is."""
    reason = _why_malformed(value)
    if reason is None:
        return None
    return Problem(
        path=path,
        expected=FQN_SHAPE,
        given=show(value),
        message=f"{path} must be {FQN_SHAPE}, but is {show(value)} ({reason}).",
        rule="fqn",
    )


def validate_fqn(value: object, path: str) -> str:
    """Return `value` if it is a well-formed FQN; raise WorkerConfigError otherwise."""
    from nemo_rl_workers.errors import WorkerConfigError

    problem = fqn_problem(value, path)
    if problem is not None:
        raise WorkerConfigError([problem])
    assert isinstance(value, str)
    return value


def _why_malformed(value: object) -> str | None:
    if not isinstance(value, str):
        return f"a {type(value).__name__}, not a string"
    if value == "":
        return "empty"
    if value != value.strip() or any(ch.isspace() for ch in value):
        return "contains whitespace"
    parts = value.split(".")
    if len(parts) < 2:
        return "needs a module and a class name"
    for part in parts:
        if part == "":
            return "empty component (leading, trailing or doubled dot)"
        if not part.isidentifier():
            return f"{part!r} is not a Python identifier"
        if keyword.iskeyword(part):
            return f"{part!r} is a Python keyword"
    return None
