"""Reading the worker-bearing sections of an untrusted, loaded config.

Configs come from YAML, so any key may hold any type. These readers never raise
on a wrong type: they return Problems carrying the config path instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nemo_rl_workers.errors import Problem, show

POLICY_BACKEND_KEYS: tuple[tuple[str, str], ...] = (
    ("megatron", "megatron_cfg"),
    ("automodel", "automodel_cfg"),
)


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """`value` as a string-keyed mapping, or None when it is not one."""
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return value
    return None


def worker_sections(config: Mapping[str, Any]) -> Iterator[tuple[str, object]]:
    """(path, section) for `policy`, `teacher` and each `teachers[i]` present."""
    for key in ("policy", "teacher"):
        if key in config and config[key] is not None:
            yield key, config[key]
    teachers = config.get("teachers")
    if isinstance(teachers, list):
        for i, teacher in enumerate(teachers):
            yield f"teachers[{i}]", teacher
    elif teachers is not None:
        yield "teachers", teachers


MODEL_SECTIONS: tuple[tuple[str, ...], ...] = (("value",), ("env", "reward_model"))
"""Sections that hold a model's backend blocks but are no worker section of this project:
the PPO value model and the reward-model environment. Upstream's outdated-config check
visits them too, so the renamed and removed keys are refused (and migrated) there as well."""


def model_sections(config: Mapping[str, Any]) -> Iterator[tuple[str, object]]:
    """`worker_sections`, then each of MODEL_SECTIONS that is present as a mapping."""
    yield from worker_sections(config)
    for parts in MODEL_SECTIONS:
        node: object = config
        for key in parts:
            mapping = as_mapping(node)
            node = mapping.get(key) if mapping is not None else None
        if as_mapping(node) is not None:
            yield ".".join(parts), node


READ_BY_CHECKS: tuple[str, ...] = (
    "policy", "teacher", "teachers", "value", "env.reward_model", "cluster", "loss_fn",
)
"""The parts of a config the rules of `check` read (the model and worker sections, the
cluster's size, the loss settings a preflight rule reads); the rest (`data:`, `logger:`)
they never look at."""


def read_by_checks(path: str) -> bool:
    """Whether the value at dotted `path` (lists as `key[i]`) is one the rules may read."""
    return any(path == part or path.startswith((f"{part}.", f"{part}["))
               for part in READ_BY_CHECKS)


def section_problem(value: object, path: str) -> Problem | None:
    """A problem when a section that must be a mapping is something else, or a mapping
    with a key that is not a string (YAML reads `1:` as an integer)."""
    if as_mapping(value) is not None:
        return None
    if isinstance(value, Mapping):
        return key_problem(value, path)
    return Problem(
        path=path,
        expected="a mapping of keys to values",
        given=show(value),
        message=f"{path} must be a mapping of keys to values, but is {show(value)}.",
        rule="schema",
    )


def key_problem(mapping: Mapping[Any, Any], path: str) -> Problem:
    """The first key of `mapping` that is not a string, as a problem (`path` "" for the
    top level of the config)."""
    key = next(k for k in mapping if not isinstance(k, str))
    kind = type(key).__name__
    a_kind = f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
    where = f"{path}.{show(key)}" if path else show(key)
    owner = path or "the config"
    return Problem(
        path=where,
        expected="a string key",
        given=show(key),
        message=f"{owner} has the key {show(key)}, which is {a_kind}, not a "
        f"string; quote it ('{show(key)}': ...) or rename it.",
        rule="schema",
    )


def enabled_flag(block: object, path: str) -> tuple[bool, list[Problem]]:
    """Whether a `<x>_cfg` block is enabled. Absent or null blocks are disabled."""
    if block is None:
        return False, []
    mapping = as_mapping(block)
    if mapping is None:
        problem = section_problem(block, path)
        return False, [problem] if problem else []
    flag = mapping.get("enabled", False)
    if flag is None:
        return False, []
    if not isinstance(flag, bool):
        return False, [
            Problem(
                path=f"{path}.enabled",
                expected="true or false",
                given=show(flag),
                message=f"{path}.enabled must be true or false, but is {show(flag)}.",
                rule="schema",
            )
        ]
    return flag, []


def policy_backend(section: Mapping[str, Any], path: str) -> tuple[str | None, list[Problem]]:
    """The training backend a policy section enables: exactly one must be on."""
    problems: list[Problem] = []
    enabled: list[str] = []
    for backend, key in POLICY_BACKEND_KEYS:
        on, found = enabled_flag(section.get(key), f"{path}.{key}")
        problems.extend(found)
        if on:
            enabled.append(backend)
    if problems:
        return None, problems
    if len(enabled) == 1:
        return enabled[0], []
    keys = " or ".join(f"{path}.{key}.enabled" for _, key in POLICY_BACKEND_KEYS)
    if enabled:
        given = "both enabled"
        message = (
            f"{path}: Megatron and Automodel are both enabled; set exactly one of {keys} to true."
        )
    else:
        given = "neither enabled"
        message = (
            f"{path}: neither Megatron nor Automodel is enabled; set exactly one of {keys} to true."
        )
    return None, [
        Problem(
            path=path,
            expected="exactly one backend enabled",
            given=given,
            message=message,
            rule="backend",
        )
    ]


def quant_cfg_of(section: Mapping[str, Any]) -> object:
    """The section's `quant_cfg`, or None when unset (null and empty count as unset)."""
    value = section.get("quant_cfg")
    if value is None or value == "":
        return None
    return value


def section_at(config: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    """The mapping at a section path such as `policy.generation` or `teachers[1]`."""
    node: object = config
    for part in path.split("."):
        name, _, index = part.partition("[")
        mapping = as_mapping(node)
        if mapping is None:
            return None
        node = mapping.get(name)
        if index:
            if not isinstance(node, list):
                return None
            i = int(index.rstrip("]"))
            node = node[i] if 0 <= i < len(node) else None
    return as_mapping(node)
