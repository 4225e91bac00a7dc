"""What `resolve` and `check` print: aligned tables for people, JSON for tools.

The JSON shape is a documented interface (docs/guides/worker-extensions.md);
change it only additively.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TextIO

from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.errors import Problem, one_line
from nemo_rl_workers.model.resolver import Resolution


def worker_json(res: Resolution) -> dict[str, Any]:
    return {
        "section": res.section,
        "backend": res.backend,
        "mode": res.mode,
        "quantized": res.quantized,
        "fqn": res.fqn,
        "rule": res.rule,
        "source": res.source,
        "protocol": res.protocol,
        "env": res.env.name,
        "warnings": list(res.warnings),
    }


def problem_json(problem: Problem, report: ConfigReport) -> dict[str, Any]:
    return {
        "path": problem.path,
        "expected": problem.expected,
        "given": problem.given,
        "message": problem.message,
        "rule": problem.rule,
        "file": problem.file,
        "line": problem.line,
        "inherited": report.inherited(problem),
        "config_line": report.config_line(problem),
    }


def revision_json(report: ConfigReport) -> dict[str, Any]:
    """The NeMo-RL revision a report judged (the reference when none was chosen)."""
    from nemo_rl_workers.tree.revision import reference_revision

    return (report.revision or reference_revision()).as_json()


def revision_line(report: ConfigReport) -> str:
    """The first line of a report: which NeMo-RL was checked."""
    from nemo_rl_workers.tree.revision import reference_revision

    return f"NeMo-RL: {(report.revision or reference_revision()).label()}"


def report_json(report: ConfigReport) -> dict[str, Any]:
    return {
        "nemo_rl": revision_json(report),
        "config": report.config,
        "workers": [worker_json(w) for w in report.workers],
        "problems": [problem_json(p, report) for p in report.problems],
        "warnings": list(report.warnings),
        "skipped": [*report.revision_notes, *report.skipped],
        "error": report.unusable,
        "world_size": report.world_size,
        "world_size_from": report.world_size_from,
        "entry": report.entry,
        "launch": report.launch_script,
        "judged": report.judged,
    }


def use_color(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Style:
    """ANSI bold and colours, or the plain text where `color` is off."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> list[str]:
    """Left-aligned columns separated by two spaces; the last column is not padded."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) for c, w in zip(cells[:-1], widths[:-1], strict=True)]
        return "  ".join([*padded, cells[-1]]).rstrip()

    return [line(header), *(line(r) for r in rows)]


def render_text(report: ConfigReport, *, color: bool) -> str:
    style = Style(color)
    head = one_line(report.config)  # a file name may hold a newline
    if report.launch_script is not None:
        head = f"{one_line(report.launch_script)}: {head}"
    out = [style.bold(head)]
    if report.unusable is not None:
        out.append("  " + style.red(f"error: {one_line(report.unusable)}"))
        return "\n".join(out)
    if report.entry is not None:
        out.append(f"  entry: {one_line(report.entry)}")
    if report.workers:
        rows = [
            [
                w.section,
                w.backend + (f"/{w.mode}" if w.mode else ""),
                "yes" if w.quantized else "no",
                w.rule,
                w.source,
                w.protocol,
                w.env.name,
                w.fqn,
            ]
            for w in report.workers
        ]
        header = ["section", "backend", "quant", "rule", "source", "protocol", "env", "worker"]
        out.extend("  " + line for line in table(rows, header))
    if report.world_size_from is not None and report.world_size is None:
        out.append(f"  world size: {report.world_size_from}")  # "undecided: why"
    elif report.world_size_from is not None:
        out.append(f"  world size: {report.world_size} ({report.world_size_from})")
    for text in report.warnings:
        out.append("  " + style.yellow(f"warning: {one_line(text)}"))
    for note in report.skipped:
        out.append(f"  skipped: {one_line(note)}")
    for problem in report.problems:
        out.append("  " + style.red(f"problem: {problem}"))
    if not report.problems and report.judged:
        out.append("  " + style.green("ok"))
    elif not report.problems:
        out.append("  " + style.yellow("undecided"))
    return "\n".join(out)
