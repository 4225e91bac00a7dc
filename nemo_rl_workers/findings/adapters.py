"""One adapter per command: its own results, as the common `Results`.

Each reads what the command already computed (a `ConfigReport`, `verify`'s JSON payload,
migrate's `FileReport`s); none runs a check again.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nemo_rl_workers.findings.results import Case, Finding, Place, Results, Severity

if TYPE_CHECKING:
    from nemo_rl_workers.checks.audit.run import AuditReport
    from nemo_rl_workers.checks.config.config_report import ConfigReport
    from nemo_rl_workers.reading.migrate_files import FileReport


def shown_path(file: str) -> str:
    """`file` relative to the working folder when it lies inside it (annotations and
    code scanning want paths from the checkout's root), else as it is."""
    try:
        relative = os.path.relpath(file)
    except ValueError:  # another drive
        return file
    return file if relative.startswith(os.pardir) else relative


# ------------------------------------------------------------------------------ check


def check_results(reports: Sequence[ConfigReport], command: str = "check") -> Results:
    from nemo_rl_workers.findings.report import revision_json

    results = Results(command, nemo_rl=revision_json(reports[0]) if reports else None)
    for report in reports:
        case = Case(report.config, command, error=report.unusable, file=report.config,
                    notes=[*report.revision_notes, *report.skipped])
        for problem in report.problems:
            # On the config checked (named as its loader names it), the file the user
            # runs; an inherited value also names the parent that writes it.
            value_from = (Place(problem.file, problem.line)
                          if problem.file is not None and report.inherited(problem) else None)
            case.findings.append(Finding(
                problem.rule or "problem", "error", problem.message,
                os.path.normpath(report.config), report.config_line(problem),
                value_from=value_from,
            ))
        for text in report.warnings:
            case.findings.append(Finding("warning", "warning", text, report.config))
        results.cases.append(case)
    return results


# ------------------------------------------------------------------------------ verify


def class_location(fqn: str, member: str = "") -> tuple[str | None, int | None]:
    """The file and line defining class `fqn` (its `member`, when the class body
    defines it), read from source as `--static` finds it; (None, None) if not found."""
    from nemo_rl_workers.tree.source import ImportRoots, Located, SourceProblem, locate
    from nemo_rl_workers.tree.source.parse import parse_file

    module, _, name = fqn.rpartition(".")
    found = locate(module, ImportRoots.of_this_interpreter()) if module else None
    if not isinstance(found, Located):
        return None, None
    file = shown_path(str(found.file))
    tree = parse_file(found.file)
    if isinstance(tree, SourceProblem):
        return file, None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for item in node.body:
                named = (
                    item.name if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    else item.target.id
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                    else None
                )
                if member and named == member:
                    return file, item.lineno
            return file, node.lineno
    return file, None


def _member_of(raw: str) -> str:
    """`member` of verify's JSON may be dotted (`Protocol.member`) or empty."""
    return raw.rpartition(".")[2]


def verify_results(payload: Mapping[str, Any], command: str = "verify") -> Results:
    """`verify`'s (or `verify --static`'s) JSON payload as one case."""
    fqn = str(payload["class"])
    case = Case(f"{fqn} [{payload['protocol']}]", command, file=class_location(fqn)[0])
    kinds: Iterable[tuple[str, Severity]] = (("violations", "error"), ("undecidable", "warning"))
    for key, severity in kinds:
        for item in payload.get(key, []):
            file, line = class_location(fqn, _member_of(str(item.get("member", ""))))
            case.findings.append(Finding(
                str(item.get("rule") or "contract"), severity, str(item["message"]), file, line,
            ))
    case.notes.extend(f"skipped: {note}" for note in payload.get("skipped", []))
    case.notes.extend(f"not checked: {note}" for note in payload.get("not_checked", []))
    return Results(command, [case])


# ------------------------------------------------------------------------------ migrate

_CHANGED_KEY = re.compile(r"^(?:dropped |set )?([^\s=]+)")


def _change_line(change: str, lines: Mapping[str, tuple[str, int]]) -> int | None:
    """The line of the key a change names (or of its nearest ancestor in the file as
    written: a renamed block's keys are found under the old name)."""
    match = _CHANGED_KEY.match(change)
    if match is None:
        return None
    path = match[1]
    candidates = [p.split(".") for p in (path, path.replace(".automodel_cfg", ".dtensor_cfg"))]
    for depth in range(max(len(c) for c in candidates), 0, -1):
        for parts in candidates:
            found = lines.get(".".join(parts[:depth]))
            if found is not None:
                return found[1]
    return None


def _key_lines(path: Path) -> Mapping[str, tuple[str, int]]:
    from nemo_rl_workers.reading.loader import load_config_located

    try:
        return load_config_located(path).lines
    except Exception:  # noqa: BLE001 - lines are a nicety; any file migrate read may fail here
        return {}


def migrate_results(reports: Sequence[FileReport]) -> Results:
    results = Results("migrate")
    for report in reports:
        name = str(report.path)
        case = Case(name, "migrate", file=name, notes=[f"note: {n}" for n in report.notes])
        if report.status == "error":
            case.error = report.error or "could not be migrated"
        elif report.status == "changed":
            lines = _key_lines(report.path)
            for change in report.changes:
                case.findings.append(Finding(
                    "migrate", "error", f"outdated config, migrate would change: {change}",
                    name, _change_line(change, lines),
                ))
        results.cases.append(case)
    return results


# ------------------------------------------------------------------------------ audit


def _file_line(where: str, root: str) -> tuple[str | None, int | None]:
    """`file:line` of the audited tree (relative to its checkout) as a path from here."""
    file, _, line = where.rpartition(":")
    if not file or not line.isdigit():
        return (shown_path(os.path.join(root, where)) if where else None), None
    return shown_path(os.path.join(root, file)), int(line)


def audit_results(report: AuditReport, checkout: str) -> Results:
    """One case per (driver, worker class) pair the tree can start; the calls a pair's
    worker cannot serve are its findings, undecided calls are errors too (never passed)."""
    results = Results("audit")
    cases: dict[tuple[str, str], Case] = {}

    def case_of(driver: str, worker: str) -> Case:
        if (driver, worker) not in cases:
            cases[(driver, worker)] = Case(f"{driver} -> {worker}", "audit")
            results.cases.append(cases[(driver, worker)])
        return cases[(driver, worker)]

    for driver in report.drivers:
        for choice in driver.choices:
            case_of(driver.name, choice.fqn)
    for f in report.findings:
        file, line = _file_line(f.call, checkout)
        owner = f.driver.split(".")[0]
        # One cause, in the case of every class it affects (a JUnit case per pair);
        # the annotation writers show it once (`Results.annotations`).
        why = f" (guarded at {f.guard})" if f.reach == "guarded" else (
            " (latent: no caller in the tree)" if f.reach == "latent" else "")
        shown = Finding(f.rule, f.severity, f"{f.message}{why} [definition: {f.definition}]",
                        file, line)
        for worker in f.classes:
            case_of(owner, worker).findings.append(shown)
    for u in report.undecided:
        file, line = _file_line(u.call, checkout)
        case_of(u.driver.split(".")[0], u.worker).findings.append(Finding(
            "undecided", "error", f"{u.driver} calls {u.method!r} on {u.worker}: {u.reason}",
            file, line))
    for site in report.unresolved:
        file, line = _file_line(site.call, checkout)
        case_of(site.driver.split(".")[0], "(unresolved)").findings.append(Finding(
            "unresolved", "warning", f"{site.function} ({site.helper}): {site.reason}",
            file, line))
    return results
