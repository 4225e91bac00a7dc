"""The CLI's side of `--output-format`: each command's results written in a structured
format, with the command's own exit codes (0 ok, 1 findings, 2 unusable input)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.adapters import check_results, migrate_results, verify_results
from nemo_rl_workers.findings.formats import FORMATS, write

if TYPE_CHECKING:
    from nemo_rl_workers.checks.config_check import ConfigReport

EXIT_OK, EXIT_PROBLEMS, EXIT_UNUSABLE = 0, 1, 2


def emit_check(reports: Sequence[ConfigReport], fmt: str, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.commands.cache import say_cache_notes

    say_cache_notes(reports, err)
    for report in reports:
        if report.unusable is not None:
            print(f"nemo-rl-workers: {one_line(report.config)}: {one_line(report.unusable)}",
                  file=err)
    if not write(check_results(reports), fmt, out, err):
        return EXIT_UNUSABLE
    if any(r.unusable is not None for r in reports):
        return EXIT_UNUSABLE
    return EXIT_PROBLEMS if any(r.problems for r in reports) else EXIT_OK


def emit_verify(payload: Mapping[str, Any], fmt: str, out: TextIO, err: TextIO) -> int:
    if not write(verify_results(payload), fmt, out, err):
        return EXIT_UNUSABLE
    return EXIT_OK if payload["ok"] else EXIT_PROBLEMS


# ------------------------------------------------------------------------------ migrate


def wants_format(argv: Sequence[str]) -> bool:
    """Whether `migrate ARGS` names an output format (else migrate runs as it always did)."""
    return any(a == "--json" or a == "--output-format" or a.startswith("--output-format=")
               for a in argv)


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise _Usage(message)


def _migrate_parser() -> _Parser:
    parser = _Parser(prog="nemo-rl-workers migrate", add_help=False)
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--explicit-workers", action="store_true")
    parser.add_argument("--output-format", choices=FORMATS, default=None)
    parser.add_argument("--json", action="store_true")
    return parser


def _without_format(argv: Sequence[str]) -> list[str]:
    rest: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--output-format":
            skip = True
        elif not arg.startswith("--output-format="):
            rest.append(arg)
    return rest


def run_migrate_check(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """`migrate --check CONFIG... --output-format F`: migrate's verdicts, in F."""
    from nemo_rl_workers.commands.migrate import (
        MigrationError,
        expand_inputs,
        migrate_paths,
        run_migrate,
    )
    from nemo_rl_workers.commands.options import chosen_format
    from nemo_rl_workers.findings.formats import unavailable

    try:
        args = _migrate_parser().parse_args(list(argv))
    except _Usage as usage:
        print(f"nemo-rl-workers migrate: error: {usage} "
              "(--output-format goes with --check only)", file=err)
        return EXIT_UNUSABLE
    fmt = chosen_format(args)
    if fmt is None:
        print("nemo-rl-workers migrate: error: --json and --output-format "
              f"{args.output_format} disagree; give one", file=err)
        return EXIT_UNUSABLE
    if unavailable(fmt) is not None:
        print(f"nemo-rl-workers migrate: error: {unavailable(fmt)}", file=err)
        return EXIT_UNUSABLE
    if fmt != "text" and not args.check:
        print(f"nemo-rl-workers migrate: error: --output-format {fmt} needs --check", file=err)
        return EXIT_UNUSABLE
    if fmt == "text":
        return run_migrate(_without_format(argv), out, err)
    configs: list[Path] = args.configs
    try:
        inputs = expand_inputs(configs)
    except MigrationError as e:
        print(f"error: {one_line(str(e))}", file=err)
        return EXIT_UNUSABLE
    if not inputs:
        names = ", ".join(one_line(str(c)) for c in configs)
        print(f"error: no config files found in {names}", file=err)
        return EXIT_UNUSABLE
    reports = migrate_paths(configs, explicit_workers=args.explicit_workers)
    for report in reports:
        if report.status == "error":
            print(f"error: {one_line(str(report.path))}: {one_line(report.error or '')}",
                  file=err)
    if fmt == "json":
        json.dump({"files": [
            {"path": str(r.path), "status": r.status, "changes": list(r.changes),
             "notes": list(r.notes), "error": r.error}
            for r in reports
        ]}, out, indent=2)
        out.write("\n")
    elif not write(migrate_results(reports), fmt, out, err):
        return EXIT_UNUSABLE
    if any(r.status == "error" for r in reports):
        return EXIT_UNUSABLE
    return EXIT_PROBLEMS if any(r.status == "changed" for r in reports) else EXIT_OK
