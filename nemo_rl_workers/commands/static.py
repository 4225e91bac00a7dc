"""`verify --static` and `check --static`: the CLI side of `static_check`.

Same output, JSON shapes and exit codes as the runtime `verify` and `check`
(0 no problem, 1 problems, 2 unusable input), so a CI job can switch between them.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import TYPE_CHECKING, TextIO

from nemo_rl_workers.checks.config_check import ConfigReport
from nemo_rl_workers.checks.static_check import (
    ProtocolSpec,
    ProtocolText,
    StaticReport,
    Subject,
    checker_command,
    judge,
)
from nemo_rl_workers.checks.static_kept import KeptVerdicts
from nemo_rl_workers.commands.cache import open_cache, say_static_notes
from nemo_rl_workers.commands.structured import emit_verify
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.findings.formats import STRUCTURED

if TYPE_CHECKING:
    from nemo_rl_workers.commands.verify_tree import Judged

EXIT_OK, EXIT_PROBLEMS, EXIT_UNUSABLE = 0, 1, 2
ROLE_NOTE = "the constructor binding (--role) is checked by the runtime verifier only"


def _checker_missing(checker: str, err: TextIO) -> bool:
    if checker_command(checker) is None:
        print(
            f"nemo-rl-workers: {checker} is not installed in this environment "
            f"(pip install {checker}); --checker chooses another",
            file=err,
        )
        return True
    return False


def verify_static(args: argparse.Namespace, out: TextIO, err: TextIO,
                  judged: Judged | None = None) -> int:
    """`verify FQN --protocol P --static`: judge one class from its source (taken from the
    NeMo-RL tree `judged` names first, against that tree's Protocol where it has one)."""
    if _checker_missing(args.checker, err):
        return EXIT_UNUSABLE
    usable, store = open_cache(args, err)
    if not usable:
        return EXIT_UNUSABLE
    cache = KeptVerdicts(store) if store is not None else None
    tree_root = judged.tree_root if judged is not None else None
    tree_protocol = judged.protocol if judged is not None else None
    if tree_protocol is not None:
        subject = Subject(args.fqn, tree_protocol.name, args.base)
        protocols: dict[str, ProtocolSpec] | None = {
            tree_protocol.name: ProtocolText(tree_protocol.name, tree_protocol.text)}
    else:
        subject, protocols = Subject(args.fqn, args.protocol, args.base), None
    (report,) = judge([subject], checker=args.checker, cache=cache, protocols=protocols,
                      first_roots=(tree_root,) if tree_root else ())
    say_static_notes(cache, err)
    if report.unusable is not None:
        print(f"nemo-rl-workers: {report.unusable}", file=err)
        return EXIT_UNUSABLE
    skipped = [*report.skipped, *([ROLE_NOTE] if args.role else [])]
    fmt: str = getattr(args, "output_format", None) or "text"
    if args.json or fmt in STRUCTURED:
        payload = {
            "class": args.fqn,
            "protocol": args.protocol,
            "ok": report.ok,
            "violations": [
                {"member": f.member, "rule": f.rule, "message": line}
                for f, line in zip(report.findings, report.lines(), strict=True)
            ],
            "skipped": skipped,
            "checker": args.checker,
        }
        if fmt in STRUCTURED:
            return emit_verify(payload, fmt, out, err)
        json.dump(payload | (judged.as_json() if judged is not None else {}), out, indent=2)
        out.write("\n")
    else:
        if judged is not None and judged.line is not None:
            print(judged.line, file=out)
        if report.ok:
            contract = tree_protocol.described() if tree_protocol is not None else args.protocol
            print(f"{args.fqn} implements {contract}", file=out)
        for line in report.lines():
            print(line, file=out)
        for note in skipped:
            print(f"skipped: {note}", file=out)
    return EXIT_OK if report.ok else EXIT_PROBLEMS


def add_static_problems(
    reports: list[ConfigReport], checker: str, err: TextIO,
    options: argparse.Namespace | None = None,
) -> bool:
    """Judge every resolved worker of `reports` from source (one checker run per
    environment) and add what is wrong to each report. False if no checker is here, or
    the cache `options` name cannot be used."""
    from nemo_rl_workers.checks.contract_check import WorkerCheck

    if _checker_missing(checker, err):
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
    from nemo_rl_workers.checks.config_check import load_for_check
    from nemo_rl_workers.reading.loader import ConfigLoadError
    from nemo_rl_workers.reading.origin import locate as locate_problem

    try:
        _, lines = load_for_check(config)
    except ConfigLoadError:
        return [p.located(config) for p in problems]
    return [locate_problem(config, lines, p) for p in problems]
