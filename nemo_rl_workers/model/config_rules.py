"""Steps 2 and 3 of the pre-allocation order, over a whole config: outdated keys, preflight.

Kept apart from `nemo_rl.pipeline` so that `resolve` and `check` reach these rules
without importing the verification and Ray machinery.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nemo_rl_workers.errors import Problem
from nemo_rl_workers.model.keys import misspelled_key_problems
from nemo_rl_workers.model.outdated import outdated_config_problems
from nemo_rl_workers.model.preflight import preflight_problems


@dataclass(frozen=True)
class RuleReport:
    """What steps 2 and 3 found in a whole config."""

    problems: list[Problem]
    warnings: list[str]
    skipped: list[str]


def config_rules(
    config: Mapping[str, Any],
    *,
    world_size: int | None,
    preflight: bool = True,
    sections: Iterable[tuple[str, object]] | None = None,
    outdated: bool = True,
) -> RuleReport:
    """Steps 2 and 3 over the config's worker sections (or the given `sections` alone).

    Step 2 includes misspelled worker-selection keys (rule `key`); `outdated=False` leaves
    out the outdated-key rules (for a NeMo-RL whose schema is not known).
    """
    problems: list[Problem] = []
    chosen = None if sections is None else list(sections)
    if outdated:
        merge_problems(problems, outdated_config_problems(config, sections=chosen))
    merge_problems(problems, misspelled_key_problems(config, sections=chosen))
    if not preflight:
        return RuleReport(problems, [], [])
    report = preflight_problems(config, world_size=world_size, sections=chosen)
    merge_problems(problems, report.problems)
    return RuleReport(problems, list(dict.fromkeys(report.warnings)), list(report.skipped))


def merge_problems(problems: list[Problem], new: Iterable[Problem]) -> None:
    """Add problems, skipping one at a path an earlier step already reported."""
    seen = {p.path for p in problems}
    problems.extend(p for p in new if p.path not in seen)
