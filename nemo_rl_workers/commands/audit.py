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
from pathlib import Path
from typing import TextIO

from nemo_rl_workers.checks.audit.baseline import (
    BaselineError,
    read_baseline,
    write_baseline,
    write_keys,
)
from nemo_rl_workers.checks.audit.run import UnusableTree, audit, checkout_root
from nemo_rl_workers.findings.adapters import audit_results
from nemo_rl_workers.findings.audit_report import render_text, report_json
from nemo_rl_workers.findings.exit_codes import EXIT_OK, EXIT_PROBLEMS, EXIT_UNUSABLE
from nemo_rl_workers.findings.formats import STRUCTURED
from nemo_rl_workers.findings.report import use_color
from nemo_rl_workers.findings.reporter import Reporter
from nemo_rl_workers.tree.checkout import project_pin


def run_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nemo_rl_workers.checks.audit.extensions import UnusableExtension, extension_side
    from nemo_rl_workers.checks.audit.protocols_emit import emit_protocols
    from nemo_rl_workers.checks.audit.protocols_shape import EmitError

    say = Reporter(out, err).of("audit")
    if getattr(args, "prune_baseline", False) and not args.baseline:
        return say.unusable("--prune-baseline needs --baseline FILE, the baseline to prune")
    try:
        known = read_baseline(Path(args.baseline)) if args.baseline else set()
        pinned, project_problem = project_pin(checkout_root(Path(args.nemo_rl)))
        if project_problem is not None:
            say.notice(project_problem)
        extend, note = extension_side(args.extensions, args.path, args.vllm_version, pinned)
        if note:
            say.notice(note)
        emitted: list[str] = []
        report = audit(Path(args.nemo_rl), paths=[Path(p) for p in args.path],
                       extend=extend if args.emit_protocols is None
                       else emit_protocols(extend, Path(args.emit_protocols), emitted))
    except (UnusableTree, BaselineError, UnusableExtension, EmitError) as bad:
        return say.unusable(str(bad))
    for line in emitted:
        say.notice(line)
    if args.write_baseline:
        try:
            write_baseline(Path(args.write_baseline), report.findings)
        except OSError as bad:
            return say.unusable(f"cannot write {args.write_baseline}: {bad.strerror or bad}")
    if args.baseline:
        report.apply_baseline(known)
        if report.stale and getattr(args, "prune_baseline", False):
            try:
                write_keys(Path(args.baseline), known - set(report.stale))
            except OSError as bad:
                return say.unusable(f"cannot write {args.baseline}: {bad.strerror or bad}")
            say.notice(f"removed {len(report.stale)} stale entries from {args.baseline}")
    for problem in report.problems:
        say.notice(str(problem))
    fmt = getattr(args, "output_format", None)  # --output-format, wired by workers.cli
    if fmt in STRUCTURED:
        if not say.results(audit_results(report, str(checkout_root(Path(args.nemo_rl)))), fmt):
            return EXIT_UNUSABLE
    elif args.json:
        say.json(report_json(report))
    else:
        say.lines(render_text(report, color=use_color(out),
                              show_guarded=getattr(args, "show_guarded", False)))
    if report.problems:
        return EXIT_UNUSABLE
    if args.write_baseline:
        say.notice(f"wrote {len({k for f in report.findings for k in f.keys})} baseline entries "
                  f"to {args.write_baseline}")
        return EXIT_OK
    # An undecided call is never passed: the source could not tell whether it works.
    # A guarded finding (a note) fails nothing: every caller in the tree excludes it.
    if any(f.severity != "note" for f in report.findings) or report.undecided:
        return EXIT_PROBLEMS
    pruned = getattr(args, "prune_baseline", False)
    if report.stale and getattr(args, "fail_on_stale", False) and not pruned:
        return EXIT_PROBLEMS
    return EXIT_OK
