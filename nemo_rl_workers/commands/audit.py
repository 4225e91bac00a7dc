"""`nemo-rl-workers audit`: the command's logic (nemo_rl_workers.commands.cli only registers it).

Exit codes: 0 no finding (or `--write-baseline` wrote one), 1 findings or undecided
calls (a worker whose MRO the source cannot tell: a base outside the tree and the stubs,
a class that is its own base), or with `--fail-on-stale` baseline entries that no finding
matches any more, 2 unusable input (no such folder, not a NeMo-RL checkout, a bad
baseline, `--prune-baseline` without `--baseline`, an extension class that is neither in
the tree nor under `--path`, with "did you mean X?", or a file of the tree that could not
be read or parsed: the audit would be incomplete). Each problem is one line on stderr.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from nemo_rl_workers.checks.audit.baseline import (
    BaselineError,
    read_baseline,
    write_baseline,
    write_keys,
)
from nemo_rl_workers.checks.audit.run import UnusableTree, audit, checkout_root
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.adapters import audit_results
from nemo_rl_workers.findings.audit_report import render_text, report_json
from nemo_rl_workers.findings.formats import STRUCTURED, write
from nemo_rl_workers.findings.report import use_color
from nemo_rl_workers.tree.checkout import project_pin

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


def run_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.checks.audit.extensions import UnusableExtension, extension_side
    from nemo_rl_workers.checks.audit.protocols_emit import emit_protocols
    from nemo_rl_workers.checks.audit.protocols_shape import EmitError

    if getattr(args, "prune_baseline", False) and not args.baseline:
        print("nemo-rl-workers: audit: --prune-baseline needs --baseline FILE, the baseline "
              "to prune", file=err)
        return EXIT_UNUSABLE
    try:
        known = read_baseline(Path(args.baseline)) if args.baseline else set()
        pinned, project_problem = project_pin(checkout_root(Path(args.nemo_rl)))
        if project_problem is not None:
            print(f"nemo-rl-workers: audit: {one_line(project_problem)}", file=err)
        extend, note = extension_side(args.extensions, args.path, args.vllm_version, pinned)
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
    if args.baseline:
        report.apply_baseline(known)
        if report.stale and getattr(args, "prune_baseline", False):
            try:
                write_keys(Path(args.baseline), known - set(report.stale))
            except OSError as bad:
                print(f"nemo-rl-workers: audit: cannot write {one_line(args.baseline)}: "
                      f"{bad.strerror or bad}", file=err)
                return EXIT_UNUSABLE
            print(f"nemo-rl-workers: audit: removed {len(report.stale)} stale entries from "
                  f"{one_line(args.baseline)}", file=err)
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
        for line in render_text(report, color=use_color(out),
                                show_guarded=getattr(args, "show_guarded", False)):
            print(line, file=out)
    if report.problems:
        return EXIT_UNUSABLE
    if args.write_baseline:
        print(f"nemo-rl-workers: audit: wrote {len({k for f in report.findings for k in f.keys})} "
              f"baseline entries to {one_line(args.write_baseline)}", file=err)
        return EXIT_OK
    # An undecided call is never passed: the source could not tell whether it works.
    # A guarded finding (a note) fails nothing: every caller in the tree excludes it.
    if any(f.severity != "note" for f in report.findings) or report.undecided:
        return EXIT_FINDINGS
    pruned = getattr(args, "prune_baseline", False)
    if report.stale and getattr(args, "fail_on_stale", False) and not pruned:
        return EXIT_FINDINGS
    return EXIT_OK
