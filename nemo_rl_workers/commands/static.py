"""`check --static`: every resolved worker judged from source by a type checker
(`static_check`), its problems added to the config's report; `verify --static` is
`commands.verify`'s. Same output, JSON shapes and exit codes as without `--static`
(0 no problem, 1 problems, 2 unusable input), so a CI job can switch between them.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import TextIO

from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.checks.static.static_check import (
    StaticReport,
    Subject,
    checker_command,
    judge,
)
from nemo_rl_workers.checks.static.static_kept import KeptVerdicts
from nemo_rl_workers.commands.cache import say_static_notes
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.findings.reporter import Reporter
from nemo_rl_workers.tree.revisions import open_cache


def checker_missing(checker: str, err: TextIO) -> bool:
    """Whether `--checker`'s type checker is missing here (after one line saying so)."""
    if checker_command(checker) is None:
        Reporter(err, err).notice(f"{checker} is not installed in this environment "
                                 f"(pip install {checker}); --checker chooses another")
        return True
    return False


def add_static_problems(
    reports: list[ConfigReport], checker: str, err: TextIO,
    options: argparse.Namespace | None = None,
) -> bool:
    """Judge every resolved worker of `reports` from source (one checker run per
    environment) and add what is wrong to each report. False if no checker is here, or
    the cache `options` name cannot be used."""
    from nemo_rl_workers.checks.contract.contract_check import WorkerCheck

    if checker_missing(checker, err):
        return False
    usable, store = open_cache(options or argparse.Namespace(no_cache=True), err)
    if not usable:
        return False
    cache = KeptVerdicts(store) if store is not None else None
    wanted: dict[str, dict[Subject, None]] = defaultdict(dict)  # python -> subjects
    # A section another NeMo-RL tree starts is judged against that tree's driver calls
    # (the audit's findings, scoped to the config), not against this project's Protocols.
    judged = {id(report): [res for res in report.workers if res.rule != "tree"]
              for report in reports}
    for report in reports:
        for res in judged[id(report)]:
            wanted[res.env.python][Subject(res.fqn, res.protocol, res.base_fqn)] = None
    verdicts: dict[tuple[str, Subject], StaticReport] = {}
    for python, subjects in wanted.items():
        for verdict in judge(list(subjects), checker=checker, python=python, cache=cache):
            verdicts[(python, verdict.subject)] = verdict
    say_static_notes(cache, err)
    for report in reports:
        found: list[Problem] = []
        for res in judged[id(report)]:
            verdict = verdicts[(res.env.python, Subject(res.fqn, res.protocol, res.base_fqn))]
            check = WorkerCheck.of(res, {})
            found.extend(_problems(check.field_path, check.expected, res.fqn, verdict))
            report.skipped.extend(f"{res.section}: {note}" for note in verdict.skipped)
        report.problems.extend(_locate(report.config, found))
    return True


def _problems(path: str, expected: str, fqn: str, verdict: StaticReport) -> list[Problem]:
    if verdict.unusable is not None:
        message = f"{path}={fqn} cannot be judged from source: {verdict.unusable}"
        return [Problem(path, expected, fqn, message, rule="import")]
    contract = f"the {verdict.subject.protocol} contract"
    return [
        Problem(
            path,
            expected,
            fqn,
            f"{path}={fqn} is undecided for {contract} (never a pass): {finding.message}"
            if finding.rule == "undecided"
            else f"{path}={fqn} does not satisfy {contract}: {line}",
            rule="contract",
        )
        for finding, line in zip(verdict.findings, verdict.lines(), strict=True)
    ]


def _locate(config: str, problems: list[Problem]) -> list[Problem]:
    """The problems at the file and line that set their key, as `check` reports them."""
    if not problems:
        return problems
    from nemo_rl_workers.checks.config.config_check import load_for_check
    from nemo_rl_workers.reading.loader import ConfigLoadError
    from nemo_rl_workers.reading.origin import locate as locate_problem

    try:
        _, lines = load_for_check(config)
    except ConfigLoadError:
        return [p.located(config) for p in problems]
    return [locate_problem(config, lines, p) for p in problems]
