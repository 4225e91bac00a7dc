"""Config rules checked before any resolution: outdated keys and the backend choice.

Visits `policy`, `teacher`, each `teachers[i]`, `value` and `env.reward_model` (as
upstream does), and reports every problem in every section at once, in this order per
section:

1. `dtensor_cfg` -> `automodel_cfg` rename (rule `outdated.rename`);
2. `_v2` keys, for either value (rule `outdated.v2`): under `automodel_cfg`, and
   also under a not-yet-renamed `dtensor_cfg`, named by the path where it sits;
3. exactly one of Megatron / Automodel enabled (rule `backend`, from
   `sections.policy_backend`). A `dtensor_cfg` block counts as the `automodel_cfg`
   it will become, so a config whose only fault is the old name gets only the
   rename, while a conflict that survives the rename is reported now too. Worker
   sections only: `value` and `env.reward_model` are checked for stale keys alone.

The config is never mutated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nemo_rl_workers.errors import Problem, raise_if_any, show
from nemo_rl_workers.model.sections import (
    MODEL_SECTIONS,
    as_mapping,
    model_sections,
    policy_backend,
    section_problem,
)

OLD_KEY = "dtensor_cfg"
NEW_KEY = "automodel_cfg"
V2_KEY = "_v2"


def _rename_problem(section: Mapping[str, Any], path: str) -> Problem:
    old, new = f"{path}.{OLD_KEY}", f"{path}.{NEW_KEY}"
    if NEW_KEY in section:
        advice = f"both are set, so move what {old} holds into {new} and delete {old}."
    else:
        advice = "rename the key, its contents are unchanged."
    return Problem(
        path=old,
        expected=new,
        given=old,
        message=f"{old} has been renamed to {new}; {advice}",
        rule="outdated.rename",
    )


def _v2_problem(block: object, block_path: str) -> Problem | None:
    mapping = as_mapping(block)
    if mapping is None or V2_KEY not in mapping:
        return None
    path = f"{block_path}.{V2_KEY}"
    value = show(mapping[V2_KEY])
    return Problem(
        path=path,
        expected=f"no {V2_KEY} key",
        given=value,
        message=(
            f"{path} is no longer supported (there is one Automodel worker now); "
            f"remove it, whatever its value (it is {value})."
        ),
        rule="outdated.v2",
    )


_MODEL_PATHS = frozenset(".".join(parts) for parts in MODEL_SECTIONS)


def _section_problems(section: Mapping[str, Any], path: str) -> list[Problem]:
    problems: list[Problem] = []
    has_old = OLD_KEY in section
    if has_old:
        problems.append(_rename_problem(section, path))
        old_v2 = _v2_problem(section[OLD_KEY], f"{path}.{OLD_KEY}")
        if old_v2 is not None:
            problems.append(old_v2)
    new_v2 = _v2_problem(section.get(NEW_KEY), f"{path}.{NEW_KEY}")
    if new_v2 is not None:
        problems.append(new_v2)
    if path in _MODEL_PATHS:
        return problems  # no worker of ours runs it: the backend rule is not ours to apply
    # Judge the backend as it will be after the rename (a read-only view).
    view = section
    if has_old and NEW_KEY not in section:
        view = {**section, NEW_KEY: section[OLD_KEY]}
    problems.extend(policy_backend(view, path)[1])
    return problems


def outdated_config_problems(
    config: Mapping[str, Any], *, sections: Iterable[tuple[str, object]] | None = None
) -> list[Problem]:
    """Every outdated-key and backend problem of every worker section, in order.

    `sections` replaces the config's own (path, section) pairs, to check one section
    (e.g. a `Policy`'s) under its own path.
    """
    problems: list[Problem] = []
    for path, section in model_sections(config) if sections is None else sections:
        mapping = as_mapping(section)
        if mapping is None:
            if path == "teachers":  # the list itself is not a list
                problems.append(
                    Problem(
                        path=path,
                        expected="a list of teacher policy sections",
                        given=show(section),
                        message=f"teachers must be a list of teacher policy sections, "
                        f"but is {show(section)}.",
                        rule="schema",
                    )
                )
                continue
            problem = section_problem(section, path)
            if problem is not None:
                problems.append(problem)
            continue
        problems.extend(_section_problems(mapping, path))
    return problems


def check_outdated_config(config: Mapping[str, Any]) -> None:
    """Raise one WorkerConfigError carrying every problem, if there are any."""
    raise_if_any(outdated_config_problems(config))
