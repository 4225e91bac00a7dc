"""`nemo-rl-workers migrate`: rewrite outdated NeMo-RL configs to the current schema,
keeping comments (the command driver).

The work is split by concern: `migration` (what changes, and planning files with their
`defaults:` parents), `yaml_edits` (editing the text at node spans) and `migrate_files`
(reading and replacing files safely); the grammar is `options.migrate_parser`. This module
writes what was planned and reports it, as text or (`--check` with `--output-format`) in a
structured format; the names tests and callers import from it are re-exported.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from nemo_rl_workers.commands.options import (
    chosen_format,
    migrate_parser,
    parse,
    wants_format,
)
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.exit_codes import EXIT_OK, EXIT_UNUSABLE, verdict
from nemo_rl_workers.findings.reporter import Reporter
from nemo_rl_workers.model.migration import DROPPED_KEYS as DROPPED_KEYS
from nemo_rl_workers.model.migration import LOUD
from nemo_rl_workers.model.migration import RENAMED_BLOCKS as RENAMED_BLOCKS
from nemo_rl_workers.model.migration import Migration as Migration
from nemo_rl_workers.model.migration import migrate_paths as migrate_paths
from nemo_rl_workers.model.migration import migrate_text as migrate_text
from nemo_rl_workers.model.migration import plan_file as plan_file
from nemo_rl_workers.reading.migrate_files import CONFIG_SUFFIXES as CONFIG_SUFFIXES
from nemo_rl_workers.reading.migrate_files import MAX_FOLDER_ENTRIES as MAX_FOLDER_ENTRIES
from nemo_rl_workers.reading.migrate_files import FileReport as FileReport
from nemo_rl_workers.reading.migrate_files import Status as Status
from nemo_rl_workers.reading.migrate_files import expand_inputs as expand_inputs
from nemo_rl_workers.reading.migrate_files import is_dir as _is_dir
from nemo_rl_workers.reading.migrate_files import is_symlink as _is_symlink
from nemo_rl_workers.reading.migrate_files import real_path as _real
from nemo_rl_workers.reading.migrate_files import replace_refusal as replace_refusal
from nemo_rl_workers.reading.migrate_files import write_atomic as write_atomic
from nemo_rl_workers.reading.yaml_edits import MigrationError as MigrationError

PREFIX = "nemo-rl-workers migrate:"


def _destinations(
    inputs: list[tuple[Path, Path]], out: Path, single_file: bool
) -> dict[Path, Path]:
    if single_file and not _is_dir(out):
        return {inputs[0][0]: out}
    if single_file:
        return {inputs[0][0]: out / inputs[0][0].name}
    bases = {_real(base) for _, base in inputs}
    common = Path(os.path.commonpath([str(b) for b in bases]))
    return {f: out / _real(f).relative_to(common) for f, _ in inputs}


def _show_report(report: FileReport, verb: str, say: Reporter) -> None:
    name = one_line(str(report.path))  # a file name may hold a newline
    if report.status == "error":
        say.err_line(f"error: {name}: {report.error}")
        return
    say.line(f"{name}: {verb if report.status == 'changed' else 'unchanged'}")
    for change in report.changes:
        say.line(f"  {change}")
    for note in report.notes:
        if note.startswith(LOUD):  # it changes what runs: said on stderr too, file and line
            line, _, message = note.removeprefix(LOUD).removeprefix("line ").partition(": ")
            say.err_line(f"{name}:{line}: warning: {message}")
            say.line(f"  warning: {message} (line {line})")
            continue
        say.line(f"  note: {note}")


def _on_their_own_schema(args: argparse.Namespace, inputs: list[tuple[Path, Path]],
                         say: Reporter) -> set[Path] | None:
    """The files whose NeMo-RL reads the older schema they are on: migrate moves configs
    to the schema of their tree, never away from it, so these stay as they are (one line
    per tree says why). None after one line for a bad --nemo-rl."""
    from nemo_rl_workers.tree.checkout import UnusableCheckout, find_checkout
    from nemo_rl_workers.tree.revision import NEW_SCHEMA
    from nemo_rl_workers.tree.revisions import Revisions

    kept: dict[str, list[Path]] = {}
    revisions = Revisions(args, say.err)
    try:
        for file, _ in inputs:
            revision = revisions(find_checkout(args.nemo_rl, [str(file)], args.reference))
            if revision is None:
                return None
            if revision.schema != NEW_SCHEMA:
                kept.setdefault(revision.label(), []).append(file)
    except UnusableCheckout as bad:
        say.notice(str(bad))
        return None
    finally:
        revisions.say_notes()
    for label, files in kept.items():
        say.notice(f"{len(files)} file(s) left unchanged: they are on the schema of the NeMo-RL "
                  f"they belong to, {label}; give --reference (or --nemo-rl with a tree on "
                  "the automodel_cfg schema) to migrate toward it")
    return {f for files in kept.values() for f in files}


def run_migrate(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """`nemo-rl-workers migrate CONFIG... [--in-place | -o OUT | --check] [--explicit-workers]`,
    and `migrate --check CONFIG... --output-format F`: migrate's verdicts, in F.

    Exit status: 0 done or nothing to do, 1 `--check` found a file that would change,
    2 unusable input (a missing file, invalid YAML, a usage error).
    """
    say = Reporter(out, err, PREFIX)
    formatted = wants_format(argv)
    parser = migrate_parser(formatted=formatted)
    if not formatted and ("-h" in argv or "--help" in argv):
        say.write(parser.format_help())
        return EXIT_OK
    args = parse(parser, argv, out, err)  # a usage error: one line, like every unusable input
    if isinstance(args, int):
        return args
    fmt = chosen_format(args) if formatted else "text"
    if formatted:
        problem = _format_problem(args, fmt)
        if problem is not None:
            return say.prefixed(f"{PREFIX} error:").unusable(problem)
    configs: list[Path] = args.configs
    files = say.prefixed("error:")
    try:
        inputs = expand_inputs(configs)
    except MigrationError as e:
        return files.unusable(str(e))
    if not inputs:
        return files.unusable(f"no config files found in {', '.join(str(c) for c in configs)}")
    if fmt is not None and fmt != "text":
        return _formatted(configs, args.explicit_workers, fmt, say)
    return _migrate(args, configs, inputs, say)


def _format_problem(args: argparse.Namespace, fmt: str | None) -> str | None:
    from nemo_rl_workers.findings.formats import unavailable

    if fmt is None:
        return f"--json and --output-format {args.output_format} disagree; give one"
    if unavailable(fmt) is not None:
        return unavailable(fmt)
    if fmt != "text" and not args.check:
        return f"--output-format {fmt} needs --check"
    return None


def _formatted(configs: list[Path], explicit_workers: bool, fmt: str, say: Reporter) -> int:
    """`--check` in a format: what would change in each file, written nowhere."""
    from nemo_rl_workers.findings.adapters import migrate_results

    reports = migrate_paths(configs, explicit_workers=explicit_workers)
    for report in reports:
        if report.status == "error":
            say.prefixed("error:").notice(f"{report.path}: {report.error or ''}")
    if fmt == "json":
        say.json({"files": [
            {"path": str(r.path), "status": r.status, "changes": list(r.changes),
             "notes": list(r.notes), "error": r.error}
            for r in reports
        ]})
    elif not say.results(migrate_results(reports), fmt):
        return EXIT_UNUSABLE
    if any(r.status == "error" for r in reports):
        return EXIT_UNUSABLE
    return verdict(any(r.status == "changed" for r in reports))


def _migrate(args: argparse.Namespace, configs: list[Path], inputs: list[tuple[Path, Path]],
             say: Reporter) -> int:
    """Show, write (--in-place, -o) or judge (--check) each file, then the counts."""
    kept = _on_their_own_schema(args, inputs, say)
    if kept is None:
        return EXIT_UNUSABLE
    if kept:
        inputs = [(f, base) for f, base in inputs if f not in kept]
        configs = [c for c in configs if _is_dir(c) or c not in kept]
        if not inputs:
            say.line(f"0 {'changed' if args.in_place else 'would change'}, "
                     f"{len(kept)} unchanged, 0 failed")
            return EXIT_OK
    reports = [r for r in migrate_paths(configs, explicit_workers=args.explicit_workers)
               if r.path not in kept]
    in_place: bool = args.in_place
    output: Path | None = args.output
    dests: dict[Path, Path] = {}
    bases = dict(inputs)  # a file is replaced within the folder it was found in or named in
    if output is not None:
        single = len(configs) == 1 and not _is_dir(configs[0])
        dests = _destinations(inputs, output, single)
    verb = "changed" if in_place or output is not None else "would change"
    shown: list[FileReport] = []
    roots = [_real(c) for c in configs if _is_dir(c)]
    named = {_real(c) for c in configs if not _is_dir(c)}
    for report in reports:
        if report.status != "error":
            try:
                refusal = (
                    replace_refusal(report, roots, named)
                    if in_place and report.text is not None else None
                )
                if refusal is not None:
                    report = FileReport(report.path, "error", error=refusal)
                elif in_place and report.text is not None:
                    write_atomic(report.path, report.new_bytes(), within=bases.get(report.path))
                elif output is not None:
                    dest = dests[report.path]
                    into = _real(output if _is_dir(output) else output.parent)
                    if _is_symlink(dest) and not _real(dest).is_relative_to(into):
                        report = FileReport(report.path, "error", error=(
                            f"{dest} is a symlink to {_real(dest)}, outside {into}; not written"))
                    else:
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        write_atomic(dest, report.new_bytes(),
                                     within=output if _is_dir(output) else output.parent)
            except OSError as e:
                report = FileReport(report.path, "error",
                                    error=f"cannot be written: {e.strerror or e}")
        shown.append(report)
        _show_report(report, verb, say)
        if not in_place and output is None and not args.check and report.text is not None:
            old = report.original.decode("utf-8").splitlines(keepends=True)
            for piece in difflib.unified_diff(
                    old, report.text.splitlines(keepends=True),
                    str(report.path), f"{report.path} (migrated)"):
                say.write(piece)
    counts = {s: sum(r.status == s for r in shown) for s in ("changed", "unchanged", "error")}
    say.line(f"{counts['changed']} {verb}, {counts['unchanged']} unchanged, "
             f"{counts['error']} failed")
    if counts["error"]:
        return EXIT_UNUSABLE
    return verdict(args.check and counts["changed"] > 0)
