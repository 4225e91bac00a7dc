"""One config file through the driver-side rules, for `resolve` and `check`.

The order is the pre-allocation order of `Policy` (outdated rules, preflight,
resolver, contract verification), minus the allocation. Problems are collected,
never raised, and located at the file and line where their key is set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nemo_rl.config.sections import section_at
from nemo_rl.errors import Problem
from nemo_rl.workers.report import ConfigReport
from nemo_rl.workers.resolver import resolve_sections


def analyze_file(
    path: str,
    overrides: Sequence[str],
    *,
    world_size: int | None,
    verify: bool,
    preflight: bool,
) -> ConfigReport:
    from nemo_rl.config.loader import ConfigLoadError, load_config

    report = ConfigReport(config=path)
    try:
        config = load_config(path, overrides)
    except ConfigLoadError as err:
        report.unusable = err.reason
        return report
    analyze_config(config, report, world_size=world_size, verify=verify, preflight=preflight)
    report.problems = [_locate(path, p) for p in report.problems]
    return report


def analyze_config(
    config: dict[str, Any],
    report: ConfigReport,
    *,
    world_size: int | None,
    verify: bool,
    preflight: bool,
) -> None:
    """Fill `report` with every problem of every rule for a loaded config."""
    from nemo_rl.config.outdated import outdated_config_problems

    outdated = outdated_config_problems(config)
    report.problems.extend(outdated)
    if preflight:
        from nemo_rl.config.preflight import preflight_problems

        found = preflight_problems(config, world_size=world_size)
        report.problems.extend(found.problems)
        report.warnings.extend(found.warnings)
        report.skipped.extend(found.skipped)
    resolutions, problems = resolve_sections(config)
    # A section with outdated keys cannot be resolved meaningfully; its rename says enough.
    stale = {p.path.split(".")[0] for p in outdated}
    report.problems.extend(p for p in problems if p.path.split(".")[0] not in stale)
    report.workers.extend(resolutions)
    for res in resolutions:
        report.warnings.extend(res.warnings)
    if not verify:
        return
    from nemo_rl.workers.contract_check import resolution_problems

    for res in resolutions:
        section = section_at(config, res.section)
        report.problems.extend(resolution_problems(res, section or {}))


def _locate(file: str, problem: Problem) -> Problem:
    from nemo_rl.config.loader import key_line

    where = key_line(file, problem.path)
    if where is None:
        return problem.located(file)
    return problem.located(where[0], where[1])
