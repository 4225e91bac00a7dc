"""`nemo-rl-workers migrate`: rewrite outdated NeMo-RL configs to the current schema,
keeping comments (the command driver).

The work is split by concern: `migration` (what changes, and planning files with their
`defaults:` parents), `yaml_edits` (editing the text at node spans) and `migrate_files`
(reading and replacing files safely). This module parses the command line, writes what
was planned and reports it; the names tests and callers import from it are re-exported.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from nemo_rl_workers.commands.options import (
    TREE_MODELS,
    Formatter,
    add_cache_flags,
    add_nemo_rl_flag,
)
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.model.migration import DROPPED_KEYS as DROPPED_KEYS
from nemo_rl_workers.model.migration import LOUD
from nemo_rl_workers.model.migration import RENAMED_BLOCKS as RENAMED_BLOCKS
from nemo_rl_workers.model.migration import Migration as Migration
from nemo_rl_workers.model.migration import migrate_paths as migrate_paths
from nemo_rl_workers.model.migration import migrate_text as migrate_text
from nemo_rl_workers.model.migration import plan_file as plan_file
from nemo_rl_workers.model.resolver import FIELD
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

# -------------------------------------------------------------------------------- CLI


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse would exit the process; run_migrate returns an exit code instead.
        raise _UsageError(message)


def _parser() -> _Parser:
    parser = _Parser(
        prog="nemo-rl-workers migrate",
        add_help=False,
        formatter_class=Formatter,
        description="Rewrite outdated NeMo-RL configs to the current schema, keeping comments. "
        "Without --in-place or -o, show what would change.",
    )
    parser.add_argument("configs", nargs="+", type=Path, metavar="CONFIG",
                        help="config files, or folders of them (searched for *.yaml, *.yml)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--in-place", "-i", action="store_true", help="rewrite the files in place")
    where.add_argument("-o", "--output", type=Path, metavar="OUT",
                       help="write here: a file for one input file, "
                       "else a folder mirroring the inputs")
    where.add_argument("--check", action="store_true",
                       help="write nothing; exit 1 when any file would change")
    parser.add_argument("--explicit-workers", action="store_true",
                        help=f"write out the {FIELD} that quant_cfg implies")
    add_nemo_rl_flag(parser)
    add_cache_flags(parser, TREE_MODELS)
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    return parser


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


def _show_report(report: FileReport, verb: str, out: TextIO, err: TextIO) -> None:
    name = one_line(str(report.path))  # a file name may hold a newline
    if report.status == "error":
        err.write(f"error: {name}: {report.error}\n")
        return
    out.write(f"{name}: {verb if report.status == 'changed' else 'unchanged'}\n")
    for change in report.changes:
        out.write(f"  {change}\n")
    for note in report.notes:
        if note.startswith(LOUD):  # it changes what runs: said on stderr too, file and line
            line, _, message = note.removeprefix(LOUD).removeprefix("line ").partition(": ")
            err.write(f"{name}:{line}: warning: {message}\n")
            out.write(f"  warning: {message} (line {line})\n")
            continue
        out.write(f"  note: {note}\n")


def _on_their_own_schema(args: argparse.Namespace, inputs: list[tuple[Path, Path]],
                         err: TextIO) -> set[Path] | None:
    """The files whose NeMo-RL reads the older schema they are on: migrate moves configs
    to the schema of their tree, never away from it, so these stay as they are (one line
    per tree says why). None after one line for a bad --nemo-rl."""
    from nemo_rl_workers.commands.cache import Revisions
    from nemo_rl_workers.tree.checkout import UnusableCheckout, find_checkout
    from nemo_rl_workers.tree.revision import NEW_SCHEMA

    kept: dict[str, list[Path]] = {}
    revisions = Revisions(args, err)
    try:
        for file, _ in inputs:
            revision = revisions(find_checkout(args.nemo_rl, [str(file)], args.reference))
            if revision is None:
                return None
            if revision.schema != NEW_SCHEMA:
                kept.setdefault(revision.label(), []).append(file)
    except UnusableCheckout as bad:
        err.write(f"nemo-rl-workers migrate: {one_line(str(bad))}\n")
        return None
    finally:
        revisions.say_notes()
    for label, files in kept.items():
        err.write(f"nemo-rl-workers migrate: {len(files)} file(s) left unchanged: they are "
                  f"on the schema of the NeMo-RL they belong to, {label}; give --reference "
                  "(or --nemo-rl with a tree on the automodel_cfg schema) to migrate toward "
                  "it\n")
    return {f for files in kept.values() for f in files}


def run_migrate(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """`nemo-rl-workers migrate CONFIG... [--in-place | -o OUT | --check] [--explicit-workers]`.

    Exit status: 0 done or nothing to do, 1 `--check` found a file that would change,
    2 unusable input (a missing file, invalid YAML, a usage error).
    """
    parser = _parser()
    if "-h" in argv or "--help" in argv:
        out.write(parser.format_help())
        return 0
    try:
        args = parser.parse_args(list(argv))
    except _UsageError as e:  # one line, like every unusable input (see --help)
        err.write(f"nemo-rl-workers migrate: error: {e}\n")
        return 2
    configs: list[Path] = args.configs
    try:
        inputs = expand_inputs(configs)
    except MigrationError as e:
        err.write(f"error: {one_line(str(e))}\n")
        return 2
    if not inputs:
        names = ", ".join(one_line(str(c)) for c in configs)
        err.write(f"error: no config files found in {names}\n")
        return 2
    kept = _on_their_own_schema(args, inputs, err)
    if kept is None:
        return 2
    if kept:
        inputs = [(f, base) for f, base in inputs if f not in kept]
        configs = [c for c in configs if _is_dir(c) or c not in kept]
        if not inputs:
            out.write(f"0 {'changed' if args.in_place else 'would change'}, "
                      f"{len(kept)} unchanged, 0 failed\n")
            return 0
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
        _show_report(report, verb, out, err)
        if not in_place and output is None and not args.check and report.text is not None:
            old = report.original.decode("utf-8").splitlines(keepends=True)
            out.writelines(difflib.unified_diff(
                old, report.text.splitlines(keepends=True),
                str(report.path), f"{report.path} (migrated)"))
    counts = {s: sum(r.status == s for r in shown) for s in ("changed", "unchanged", "error")}
    out.write(f"{counts['changed']} {verb}, {counts['unchanged']} unchanged, "
              f"{counts['error']} failed\n")
    if counts["error"]:
        return 2
    return 1 if args.check and counts["changed"] else 0
