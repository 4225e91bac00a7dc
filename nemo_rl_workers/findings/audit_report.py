"""What `audit` prints: one line per finding for people, one JSON object for tools.

The JSON shape is a documented interface (the guide's "Auditing a NeMo-RL checkout");
change it only additively.
"""

from __future__ import annotations

from typing import Any

from nemo_rl_workers.checks.audit.run import AuditReport
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.extension_report import section_json, section_lines
from nemo_rl_workers.findings.report import Style
from nemo_rl_workers.tree.conditions import describe, describe_either


def report_json(report: AuditReport) -> dict[str, Any]:
    return {
        "root": report.root,
        "findings": [
            {"rule": f.rule, "severity": f.severity, "driver": f.driver, "method": f.method,
             "worker": f.worker, "workers": list(f.classes), "call": f.call,
             "definition": f.definition, "condition": describe_either(f.condition),
             "message": f.message,
             "reach": f.reach or "reachable", **({"guard": f.guard} if f.guard else {})}
            for f in report.findings
        ],
        "call_sites": {
            "total": report.sites,
            "resolved": report.resolved,
            "unresolved": len({u.call for u in report.unresolved}),
            "unresolved_sites": [
                {"driver": u.driver, "function": u.function, "call": u.call,
                 "helper": u.helper, "reason": u.reason}
                for u in report.unresolved
            ],
        },
        "drivers": [
            {"name": d.name, "fqn": d.fqn, "definition": d.where,
             "calls_workers_of": sorted(report.calls_workers_of.get(d.name, ())),
             "workers": [{"fqn": c.fqn, "condition": describe(c.condition),
                          "quantized": c.quantized} for c in d.choices]}
            for d in report.drivers
        ],
        "worker_classes": [
            {"fqn": w.fqn, "definition": w.definition, "drivers": list(w.drivers),
             "environment": w.environment}
            for w in report.workers
        ],
        "undecided": [
            {"driver": u.driver, "method": u.method, "worker": u.worker, "call": u.call,
             "reason": u.reason}
            for u in report.undecided
        ],
        "problems": [str(p) for p in report.problems],
        "baseline_suppressed": report.suppressed,
        "baseline_stale": [dict(zip(("rule", "driver", "method", "worker"), key, strict=True))
                           for key in report.stale],
        **(section_json(report.extensions) if report.extensions is not None else {}),
    }


def render_text(report: AuditReport, *, color: bool, show_guarded: bool = False) -> list[str]:
    """One line per finding (`call: severity rule: sentence [definition]`), then the
    unresolved and undecided call sites, then a one-line summary. A guarded finding
    (every caller excludes the failing class) is a `note` line only with `show_guarded`;
    a latent one (no caller in the tree) says so."""
    style = Style(color)
    lines: list[str] = []
    for f in report.findings:
        if f.severity == "note" and not show_guarded:
            continue
        if f.severity == "error":
            tag = style.red(f"error[{f.rule}]")
        elif f.severity == "warning":
            tag = style.yellow(f"warning[{f.rule}]")
        else:
            tag = f"note[{f.rule}]"
        why = ""
        if f.reach == "guarded":
            why = f" (guarded: every caller in the tree excludes it, at {f.guard})"
        elif f.reach == "latent":
            why = " (latent: no caller in the tree)"
        lines.append(one_line(f"{f.call}: ") + tag + one_line(
            f": {f.message}{why} [definition: {f.definition}]"))
    for u in report.unresolved:
        lines.append(one_line(f"{u.call}: unresolved: {u.function} ({u.helper}): {u.reason}"))
    for d in report.undecided:
        lines.append(one_line(
            f"{d.call}: undecided: {d.driver} calls {d.method!r} on {d.worker}: {d.reason}"))
    for rule, driver, method, worker in report.stale:
        lines.append(one_line(
            f"stale baseline entry: {rule} {driver} {method!r} {worker}: no finding matches "
            "it any more"))
    if report.extensions is not None:
        lines.extend(section_lines(report.extensions))
    counts = (f"{len(report.drivers)} drivers, {len(report.workers)} worker classes, "
              f"{report.sites} dispatch call sites ({report.resolved} resolved)")
    errors = sum(f.severity == "error" for f in report.findings)
    warnings = sum(f.severity == "warning" for f in report.findings)
    guarded = sum(f.severity == "note" for f in report.findings)
    if errors or warnings:
        verdict = style.red(f"{errors} errors, {warnings} warnings")
    else:
        verdict = style.green("no findings")
    if guarded:
        verdict += f" ({guarded} guarded by their callers)"
    if report.suppressed:
        verdict += f" ({report.suppressed} more in the baseline)"
    if report.stale:
        verdict += f"; {len(report.stale)} stale baseline entries"
    lines.append(f"audit: {counts}: " + verdict)
    return lines
