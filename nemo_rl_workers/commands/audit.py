"""`nemo-rl-workers audit`: the command's logic (nemo_rl_workers.commands.cli only registers it).

Exit codes: 0 no finding (or `--write-baseline` wrote one), 1 findings or undecided
calls (a worker whose MRO the source cannot tell: a base outside the tree and the
stubs, a class that is its own base), 2 unusable
input (no such folder, not a NeMo-RL checkout, a bad baseline, or a file of the tree
that could not be read or parsed: the audit would be incomplete). Each problem is one
line on stderr.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO, TypeVar

from nemo_rl_workers.checks.audit.baseline import BaselineError, read_baseline, write_baseline
from nemo_rl_workers.checks.audit.run import UnusableTree, audit, checkout_root
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.adapters import audit_results
from nemo_rl_workers.findings.audit_report import render_text, report_json
from nemo_rl_workers.findings.formats import STRUCTURED, write
from nemo_rl_workers.findings.report import use_color

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


_P = TypeVar("_P", bound=argparse.ArgumentParser)


def add_parser(sub: argparse._SubParsersAction[_P]) -> None:
    audit_cmd = sub.add_parser(
        "audit", help="check every worker method a NeMo-RL checkout's drivers call by name")
    audit_cmd.add_argument("--nemo-rl", required=True, metavar="PATH",
                           help="the checkout: the folder holding the nemo_rl package")
    audit_cmd.add_argument("--json", action="store_true", help="one JSON object on stdout")
    audit_cmd.add_argument("--baseline", metavar="FILE", default=None,
                           help="report only findings this baseline does not record")
    audit_cmd.add_argument("--write-baseline", metavar="FILE", default=None,
                           help="record today's findings in FILE and exit 0")
    audit_cmd.add_argument(
        "extensions", nargs="*", metavar="EXTENSION",
        help="an extension class's FQN (found as source under --path), or a config whose "
        "worker_extension_cls_fqn fields name extensions")
    audit_cmd.add_argument("--path", action="append", default=[], metavar="DIR",
                           help="an import root holding the extensions' packages (repeatable)")
    audit_cmd.add_argument("--vllm-version", default=None, metavar="VERSION",
                           help="judge vLLM extensions against this installed vllm-stubs "
                           "version (default: the installed one)")
    audit_cmd.add_argument("--emit-protocols", default=None, metavar="OUT.py",
                           help="also write typed Protocols for the tree's roles and modes")


def run_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.checks.audit.extensions import UnusableExtension, extension_side
    from nemo_rl_workers.checks.audit.protocols_emit import EmitError, emit_protocols

    try:
        known = read_baseline(Path(args.baseline)) if args.baseline else set()
        extend, note = extension_side(args.extensions, args.path, args.vllm_version)
        if note:
            print(f"nemo-rl-workers: audit: {one_line(note)}", file=err)
        emitted: list[str] = []
        report = audit(Path(args.nemo_rl), paths=[Path(p) for p in args.path],
                       extend=extend if args.emit_protocols is None
                       else emit_protocols(extend, Path(args.emit_protocols), emitted))
    except (UnusableTree, BaselineError, UnusableExtension, EmitError) as bad:
        print(f"nemo-rl-workers: audit: {one_line(str(bad))}", file=err)
        return EXIT_UNUSABLE
    for line in emitted:
        print(f"nemo-rl-workers: audit: {one_line(line)}", file=err)
    if args.write_baseline:
        try:
            write_baseline(Path(args.write_baseline), report.findings)
        except OSError as bad:
            print(f"nemo-rl-workers: audit: cannot write {one_line(args.write_baseline)}: "
                  f"{bad.strerror or bad}", file=err)
            return EXIT_UNUSABLE
    if known:
        kept = [f for f in report.findings if f.key not in known]
        report.suppressed = len(report.findings) - len(kept)
        report.findings = kept
    for problem in report.problems:
        print(f"nemo-rl-workers: audit: {one_line(str(problem))}", file=err)
    fmt = getattr(args, "output_format", None)  # --output-format, wired by workers.cli
    if fmt in STRUCTURED:
        if not write(audit_results(report, str(checkout_root(Path(args.nemo_rl)))), fmt, out,
                     err):
            return EXIT_UNUSABLE
    elif args.json:
        json.dump(report_json(report), out, indent=2)
        out.write("\n")
    else:
        for line in render_text(report, color=use_color(out)):
            print(line, file=out)
    if report.problems:
        return EXIT_UNUSABLE
    if args.write_baseline:
        print(f"nemo-rl-workers: audit: wrote {len({f.key for f in report.findings})} "
              f"baseline entries to {one_line(args.write_baseline)}", file=err)
        return EXIT_OK
    # An undecided call is never passed: the source could not tell whether it works.
    return EXIT_FINDINGS if report.findings or report.undecided else EXIT_OK
