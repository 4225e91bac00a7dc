"""A config's reports, shown as `check` shows them, and the NeMo-RL each is judged against.

What `check` and `resolve` print (text or JSON) and their exit code; which tree each config
belongs to; and `check_recipe`, `check`'s verdict on one recipe that `nemo-rl-workers run`
and the armed guard run before the program. Below the commands and the guard: the guard
prints its recipe's verdict as `check` does without importing a command (the commands
arm the guard: `run`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO, cast

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.exit_codes import EXIT_OK, EXIT_PROBLEMS, EXIT_UNUSABLE
from nemo_rl_workers.findings.streams import SafeStream

if TYPE_CHECKING:
    from nemo_rl_workers.checks.config.config_report import ConfigReport
    from nemo_rl_workers.tree.revision import Revision


def check_recipe(config: str, overrides: Sequence[str], *, entry: str | None = None) -> int:
    """`check`'s verdicts on one recipe and its `key=value` overrides, against the tree
    the config belongs to (as `check` chooses it), on the process's own streams: what
    `nemo-rl-workers run` and the armed guard run before the entry point. `entry`: the
    script being run, which the config is judged through. Nothing is imported: against a
    user's tree the classes are judged from source, and the reference's are not verified."""
    from nemo_rl_workers.checks.config.config_check import analyze_file
    from nemo_rl_workers.tree.launch import Launch

    out = cast(TextIO, SafeStream(sys.stdout))
    err = cast(TextIO, SafeStream(sys.stderr))
    # The tree the config belongs to, through the default cache (no flags at launch).
    launch = argparse.Namespace(nemo_rl=None, reference=False, cache_dir=None, no_cache=False)
    revisions = config_revisions(launch, [config], err)
    if revisions is None:
        return EXIT_UNUSABLE
    revision = revisions[config]
    report = analyze_file(config, overrides, world_size=None, verify=not revision.is_reference,
                          preflight=True, world_size_from_config=True, only_read_env=True,
                          revision=revision,
                          launch=None if entry is None else Launch(
                              config, tuple(overrides), entry=entry,
                              entry_why="the script being run"))
    code = emit_reports([report], False, out, err)
    out.flush()
    err.flush()
    return code


def emit_reports(reports: list[ConfigReport], as_json: bool, out: TextIO, err: TextIO, *,
                 quiet: bool = False, summary: bool = False) -> int:
    """`check`'s and `resolve`'s reports, as text or JSON; the exit code they make. In
    text, `quiet`: one line per config and its problems and warnings, the notes counted
    once (`findings.check_summary`), else each config's table and notes; `summary`: a
    last line counting the verdicts."""
    from nemo_rl_workers.findings.check_summary import (
        quiet_block,
        skipped_summary,
        summary_line,
    )
    from nemo_rl_workers.findings.report import (
        Style,
        render_text,
        report_json,
        revision_line,
        use_color,
    )

    say_cache_notes(reports, err)
    for report in reports:
        if report.unusable is not None:
            print(f"nemo-rl-workers: {one_line(report.config)}: {one_line(report.unusable)}",
                  file=err)
    if as_json:
        payload: dict[str, Any] = (
            report_json(reports[0])
            if len(reports) == 1
            else {"configs": [report_json(r) for r in reports]}
        )
        json.dump(payload, out, indent=2)
        out.write("\n")
    else:
        color = use_color(out)
        usable = [r for r in reports if r.unusable is None]
        blocks = []
        named: str | None = None
        said: set[str] = set()
        for report in usable:
            # Each report starts with the NeMo-RL it was judged against, where it changes;
            # what that NeMo-RL makes skip is said under it, once per run.
            line = revision_line(report) if report.judged else named
            notes = [f"skipped: {one_line(n)}" for n in report.revision_notes if n not in said]
            said.update(report.revision_notes)
            head = "\n".join([line, *notes]) if line is not None and line != named \
                else "\n".join(notes)
            text = ("\n".join(quiet_block(report, Style(color))) if quiet
                    else render_text(report, color=color))
            blocks.append(f"{head}\n{text}" if head else text)
            named = line
        # Quiet: a line per config, no blank line between; then the notes, counted.
        shown = (["\n".join(blocks), "\n".join(skipped_summary(usable))] if quiet
                 else blocks)
        if summary and usable:  # input no rule could read is said on stderr alone
            shown.append(summary_line(reports))
        if any(shown):
            print("\n\n".join(block for block in shown if block), file=out)
    if any(r.unusable is not None for r in reports):
        return EXIT_UNUSABLE
    return EXIT_PROBLEMS if any(r.problems for r in reports) else EXIT_OK


def config_revisions(args: argparse.Namespace, configs: Sequence[str],
               err: TextIO) -> dict[str, Revision] | None:
    """The NeMo-RL each config is judged against; None after one line for a bad --nemo-rl
    (or --cache-dir)."""
    from nemo_rl_workers.tree.checkout import UnusableCheckout, find_checkout
    from nemo_rl_workers.tree.revisions import Revisions

    found: dict[str, Revision] = {}
    revisions = Revisions(args, err)
    try:
        for config in configs:
            revision = revisions(find_checkout(args.nemo_rl, [config], args.reference))
            if revision is None:
                return None
            found[config] = revision
    except UnusableCheckout as bad:
        print(f"nemo-rl-workers: {one_line(str(bad))}", file=err)  # a path may hold a newline
        return None
    finally:
        revisions.say_notes()
    return found


def say_cache_notes(reports: Sequence[ConfigReport], err: TextIO) -> None:
    """The lines about cache entries not trusted while the configs were judged, once each."""
    from nemo_rl_workers.errors import one_line

    for note in dict.fromkeys(n for report in reports for n in report.cache_notes):
        print(f"nemo-rl-workers: warning: {one_line(note)}", file=err)
