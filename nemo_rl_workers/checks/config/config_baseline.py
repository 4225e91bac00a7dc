"""`check`'s baselines: the problems a repository accepts for now, by rule, recipe and
config key (never by line or message, so unrelated edits do not invalidate them). A
recipe is named by its path relative to the baseline's own folder, so the file means the
same from any working directory and in a fresh clone. The file format is
`checks.baseline_file`'s, as the audit's."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nemo_rl_workers.checks.baseline_file import read_entries, write_entries
from nemo_rl_workers.checks.config.config_report import ConfigReport

FIELDS = ("rule", "recipe", "key")

Key = tuple[str, str, str]


def recipe_name(config: str, baseline: Path) -> str:
    """The config's path relative to the baseline's folder, with forward slashes."""
    folder = os.path.dirname(os.path.abspath(baseline))
    return Path(os.path.relpath(os.path.abspath(config), folder)).as_posix()


def problem_keys(report: ConfigReport, baseline: Path) -> list[Key]:
    """One key per problem of the report, in its order (two problems may share one)."""
    recipe = recipe_name(report.config, baseline)
    return [(p.rule, recipe, p.path) for p in report.problems]


def read_config_baseline(path: Path) -> set[Key]:
    """The entries of a `check` baseline; BaselineError (one line) for a file that is not
    what --write-baseline writes."""
    return {(rule, recipe, key) for rule, recipe, key in read_entries(path, FIELDS)}


def write_config_baseline(path: Path, reports: Iterable[ConfigReport]) -> int:
    """Replace `path` with the problems of `reports`; the number of entries written."""
    keys = {key for report in reports for key in problem_keys(report, path)}
    write_entries(path, FIELDS, keys)
    return len(keys)


def write_config_keys(path: Path, keys: Iterable[Key]) -> None:
    write_entries(path, FIELDS, keys)


@dataclass
class BaselineOutcome:
    accepted: int = 0  # problems the baseline records, taken out of the reports
    # Entries for a recipe this run checked that no problem matches any more. An entry
    # for a recipe not checked (pre-commit passes only the changed files) is not stale.
    stale: list[Key] = field(default_factory=list)


def apply_config_baseline(reports: Sequence[ConfigReport], known: set[Key],
                          baseline: Path) -> BaselineOutcome:
    """Take the problems `known` records out of the reports (in place, before any is
    rendered) and name the entries of the checked recipes that match nothing."""
    outcome = BaselineOutcome()
    matched: set[Key] = set()
    checked: set[str] = set()
    for report in reports:
        if report.unusable is not None:
            continue
        checked.add(recipe_name(report.config, baseline))
        keys = problem_keys(report, baseline)
        matched.update(k for k in keys if k in known)
        kept = [p for p, k in zip(report.problems, keys, strict=True) if k not in known]
        outcome.accepted += len(report.problems) - len(kept)
        report.problems[:] = kept
    outcome.stale = sorted(k for k in known - matched if k[1] in checked)
    return outcome
