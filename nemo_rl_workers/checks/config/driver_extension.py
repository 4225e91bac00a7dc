"""The class a user's driver hands a driver of the tree, judged as a config-selected one is.

`check --entry DRIVER CONFIG` against a NeMo-RL that takes an extension only in code: the
classes the driver passes (`driver_walk`) are judged by the audit's extension side, on one
read of the tree with the driver's folder (and the folder the class's package is imported
from) beside it, the same rules `audit --path DIR EXTENSION` applies:

- it exists (`driver.no-such-class`, with "did you mean X?" from the classes of the tree
  and of the user's folders);
- it takes the place of the worker the section would otherwise start
  (`driver.wrong-base`: the extension's nearest base in the tree is another worker's, a
  DTensor v2 extension run where the config selects v1);
- it is an actor class, not a subclass of one, registered with an actor environment (in
  the tree's registry or by a module of the user's, the driver itself included), and its
  module's imports of the tree resolve (the audit's `extension-*` rules);
- it has what the tree's drivers call on that role's workers, and what the driver script
  calls by name (`policy.run_all_workers_single_data("get_worker_rank")`): the audit's
  `missing-method` and keyword rules.

The driver takes the parameter at all (`driver.no-parameter`), and a class the walk cannot
tell is `driver.undecided`. Each problem is located at the driver's line. A clean class
is the section's worker in the report's table, its source "constructor".
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from nemo_rl_workers.checks.config.driver_walk import (
    DriverScript,
    Passed,
    UnusableDriver,
    read_driver,
)
from nemo_rl_workers.errors import Problem
from nemo_rl_workers.model.fqn import fqn_problem
from nemo_rl_workers.model.rows import ActorEnvironment
from nemo_rl_workers.tree.knowledge import ACTOR_ENVIRONMENT_REGISTRIES, EXTENSION_FIELD

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.context import AuditContext
    from nemo_rl_workers.checks.audit.extension_rules import ExtensionAudit
    from nemo_rl_workers.checks.audit.extensions import ExtensionSection
    from nemo_rl_workers.checks.audit.rules import Finding
    from nemo_rl_workers.model.resolver import Resolution
    from nemo_rl_workers.tree.revision import Revision

# The audit's rule, where only a module the driver does not import registers the class.
UNREGISTERED_RULE = "extension-unregistered"


class ConfigReport(Protocol):
    """What of `config_check.ConfigReport` this fills (named structurally: that module
    runs this one)."""

    workers: list[Resolution]
    problems: list[Problem]
    warnings: list[str]
    skipped: list[str]
    unusable: str | None
    revision: Revision | None


@dataclass
class _Judged:
    """What the audit's read of the tree says about one class."""

    missing: str | None = None  # "no such class" line, with the closest classes
    audit: ExtensionAudit | None = None
    findings: list[Finding] = field(default_factory=list)
    environment: str | None = None  # as the tree or the user's modules register it
    registered_by: set[str] = field(default_factory=set)  # the modules that register it


def judge_driver(entry: str, config: Mapping[str, Any], report: ConfigReport,
                 revision: Revision) -> None:
    """The classes `entry` hands the tree's drivers, judged into `report`: its problems,
    and each clean class as its section's worker. A script that cannot be read makes the
    report unusable (one line)."""
    try:
        script = read_driver(entry, config, revision)
    except UnusableDriver as bad:
        report.unusable = str(bad)
        return
    if not script.passed:
        report.skipped.append(
            f"--entry {entry}: hands no driver of this NeMo-RL a worker class "
            f"({EXTENSION_FIELD}=..., or a replaced resolver), so each section starts the "
            "class the table shows")
        return
    choices: list[tuple[Passed, Resolution]] = []
    for passed in script.passed:
        if passed.value is None and passed.undecided is None:
            report.skipped.append(f"{entry}:{passed.line}: {passed.driver} is given "
                                  f"{passed.given}, which is None: it starts its own worker")
            continue
        sections = _sections(passed, report, revision)
        if not sections:
            report.skipped.append(
                f"{entry}:{passed.line}: {passed.driver} is given {passed.given}, for "
                f"{passed.section or 'a section'} this config has no worker row of")
            continue
        for res in sections:
            problem = _unusable(entry, passed, res, revision)
            if problem is not None:
                report.problems.append(problem)
            else:
                choices.append((passed, res))
    if not choices:
        return
    judged = _audited(revision, script, [p.fqn for p, _ in choices if p.fqn is not None])
    for passed, res in choices:
        assert passed.fqn is not None
        _apply(entry, script, passed, res, judged[passed.fqn], report)


def _sections(passed: Passed, report: ConfigReport,
              revision: Revision) -> list[Resolution]:
    """The worker rows the call builds: the section its `config=` reads; else every
    section the driver starts (its worker classes are the row's)."""
    if passed.section is not None:
        return [r for r in report.workers if r.section == passed.section]
    starts = {row.default_fqn for row in revision.rows_of(passed.driver)}
    return [r for r in report.workers if r.base_fqn in starts]


def _unusable(entry: str, passed: Passed, res: Resolution,
              revision: Revision) -> Problem | None:
    """Why the class cannot be judged (undecided, no such parameter, malformed)."""
    path = passed.config_path or f"{res.section}.{EXTENSION_FIELD}"
    call = f"{passed.driver}(..., {EXTENSION_FIELD}={passed.given})"
    if not passed.replaces and passed.driver not in revision.extension_params:
        return Problem(
            path=path, expected=f"a parameter of {passed.driver}", given=passed.given,
            message=f"{call}: this NeMo-RL's {passed.driver} takes no {EXTENSION_FIELD} "
                    "parameter, so the call fails with a TypeError before any worker "
                    "starts; select the class the way this tree reads it",
            rule="driver.no-parameter").located(entry, passed.line)
    if passed.undecided is not None:
        return Problem(
            path=path, expected="a worker class the driver's source decides",
            given=passed.given,
            message=f"{res.section}: undecided: {call}: {passed.undecided}; the class its "
                    "workers run is not known, so it is not judged",
            rule="driver.undecided").located(entry, passed.line)
    malformed = fqn_problem(passed.value, path)
    if malformed is not None:
        return dataclasses.replace(
            malformed, message=f"{call}: {malformed.message}").located(entry, passed.line)
    return None


def _apply(entry: str, script: DriverScript, passed: Passed, res: Resolution,
           judged: _Judged, report: ConfigReport) -> None:
    assert passed.fqn is not None
    fqn = passed.fqn
    path = passed.config_path or f"{res.section}.{EXTENSION_FIELD}"
    by = f"{passed.driver} is given {passed.given}"
    bad: list[Problem] = []
    if judged.missing is not None:
        bad.append(Problem(path=path, expected="a class that exists", given=fqn,
                           message=f"{by}: {judged.missing}", rule="driver.no-such-class"))
    elif judged.audit is not None:
        stands_for = judged.audit.stands_for
        if stands_for is None or stands_for.fqn != res.base_fqn:
            extends = (f"its nearest base in the tree is {stands_for.fqn}'s"
                       if stands_for is not None else
                       "it extends no worker class a driver of this tree starts")
            bad.append(Problem(
                path=path, expected=f"a subclass of {res.base_fqn}", given=fqn,
                message=f"{by}: {fqn} takes the place of {res.base_fqn}, the worker "
                        f"{res.section} starts with this config, but {extends}; subclass "
                        f"{res.base_fqn} (or the plain class it wraps)",
                rule="driver.wrong-base"))
        for finding in judged.findings:
            line = _line_in(finding.call, script, report.revision)
            where = "" if line is not None else f" (at {finding.call})"
            text = f"{by}: {finding.message}{where}"
            if finding.severity == "error":
                bad.append(Problem(path=path, expected=f"a worker {passed.driver} can start",
                                   given=fqn, message=text, rule=finding.rule).located(
                                       entry, line if line is not None else passed.line))
            elif finding.severity == "warning":
                report.warnings.append(f"{entry}:{passed.line}: {text}")
        unregistered = _not_run(script, res, judged, report.revision)
        if unregistered is not None:
            bad.append(Problem(path=path, expected="a class registered by what the driver runs",
                               given=fqn, message=f"{by}: {unregistered}",
                               rule=UNREGISTERED_RULE))
        report.skipped.extend(f"{entry}:{passed.line}: {note}"
                              for note in judged.audit.unknown)
    report.problems.extend(p if p.file is not None else p.located(entry, passed.line)
                           for p in bad)
    field_path = f"{res.section}.{EXTENSION_FIELD}"
    if passed.config_path == field_path:  # the driver reads the key the tree does not
        report.warnings = [w for w in report.warnings if not (
            w.startswith(f"{field_path}=") and "is ignored by this NeMo-RL" in w)]
    if bad:
        return
    if res.source == "quant-auto":
        report.warnings.append(
            f"{entry}:{passed.line}: {res.section}.quant_cfg is set, and {passed.driver} "
            f"starts {fqn} in place of {res.fqn}, the quantized worker it would pick: the "
            f"workers quantize only if {fqn} does")
    environment = (judged.environment or (script.registered[fqn][0]
                   if fqn in script.registered else "unregistered"))
    report.workers = [dataclasses.replace(r, fqn=fqn, source="constructor",
                                          env=ActorEnvironment(name=environment))
                      if r is res else r for r in report.workers]
    report.skipped.append(f"{res.section}: {fqn}, from {entry}:{passed.line} ({by}), in "
                          f"place of {res.fqn}")


def _not_run(script: DriverScript, res: Resolution, judged: _Judged,
             revision: Revision | None) -> str | None:
    """Why the class is unregistered in the driver's process although a module of the
    user's registers it: no module the driver imports does (the audit counts every
    module beside it). None where it is registered, or where the audit said so itself."""
    fqn = judged.audit.fqn if judged.audit is not None else ""
    base = res.base_fqn
    if revision is None or base is None or base not in revision.environments or \
            fqn in revision.environments or fqn in script.registered or \
            not judged.registered_by or any(f.rule == UNREGISTERED_RULE for f in judged.findings):
        return None
    package = next((f.split(".")[0] for f in revision.driver_fqns.values()), "")
    if any(m in script.imported or m.startswith(f"{package}.") for m in judged.registered_by):
        return None
    by = ", ".join(sorted(judged.registered_by))
    registry = ACTOR_ENVIRONMENT_REGISTRIES[0]
    return (f"{fqn} is registered with an actor environment only by {by}, which "
            f"{script.file} does not import, so the driver's process has no environment "
            f"for it and the tree refuses to start it; register it in the driver before "
            f'{res.section} starts: {registry}["{fqn}"] = '
            f"{revision.environments[base]}, as the tree registers {base}")


def _line_in(where: str, script: DriverScript, revision: Revision | None) -> int | None:
    """The line of a finding's `file:line` where the file is the driver script."""
    file, _, line = where.rpartition(":")
    root = revision.root if revision is not None and revision.root is not None else "."
    if not line.isdigit() or os.path.normpath(os.path.join(root, file)) != os.path.normpath(
            os.path.abspath(script.file)):
        return None
    return int(line)


def _audited(revision: Revision, script: DriverScript,
             fqns: Sequence[str]) -> dict[str, _Judged]:
    """Each class, judged by the audit's extension side on one read of the tree with the
    user's folders beside it."""
    from nemo_rl_workers.checks.audit.run import audit

    assert revision.root is not None
    wanted = list(dict.fromkeys(fqns))
    judged = {fqn: _Judged() for fqn in wanted}
    folders = _folders(script, wanted, revision.root)

    def extend(ctx: AuditContext) -> tuple[list[Finding], ExtensionSection]:
        from nemo_rl_workers.checks.audit.extensions import Extension, audit_extensions
        from nemo_rl_workers.tree.class_names import (
            class_suggestions,
            no_such_class,
            user_roots,
        )
        from nemo_rl_workers.tree.source import ImportRoots, resolve_fqn

        present: list[Extension] = []
        for fqn in wanted:
            if resolve_fqn(ctx.tree, fqn) is None:
                roots = ImportRoots.of_this_interpreter().searched_first(folders)
                judged[fqn].missing = no_such_class(
                    fqn, f"not in the tree or under {', '.join(folders)}",
                    class_suggestions(fqn, user_roots(roots, folders), [ctx.tree]))
            else:
                present.append(Extension(fqn, script.file))
            judged[fqn].environment = ctx.side.environments.get(fqn)
            judged[fqn].registered_by = {
                module.name for module in ctx.tree.modules.values()
                for registry in ACTOR_ENVIRONMENT_REGISTRIES
                for item in module.item_assignments.get(registry, []) if item.name == fqn}
            if fqn in ctx.side.registered_in:
                judged[fqn].registered_by.add(ctx.side.registered_in[fqn])
        findings, section = audit_extensions(ctx, present, None)
        for item in section.audits:
            judged[item.fqn].audit = item
        return findings, section

    report = audit(Path(revision.root), paths=[Path(f) for f in folders], extend=extend)
    for finding in report.per_class:
        if finding.worker in judged:
            judged[finding.worker].findings.append(finding)
    return judged


def _folders(script: DriverScript, fqns: Sequence[str], tree_root: str) -> list[str]:
    """The driver's folder (Python puts it first on the import path), and each folder a
    class's package is imported from when it is another of the user's (not an
    installation's, not the tree's)."""
    from nemo_rl_workers.tree.source import ImportRoots, Located, locate

    folders = [script.folder]
    roots = ImportRoots.of_this_interpreter().searched_first([script.folder])
    for fqn in fqns:
        found = locate(fqn.rpartition(".")[0], roots)
        if not isinstance(found, Located):
            continue
        root = str(found.root)
        if "site-packages" in root or "dist-packages" in root or os.path.normpath(
                root) == os.path.normpath(tree_root) or root in folders:
            continue
        folders.append(root)
    return folders

