"""`check --baseline` / `--write-baseline` / `--fail-on-stale` / `--prune-baseline`: the
audit's baseline options for config problems (`checks.config.config_baseline`), so a repository
with known-bad recipes can gate every new problem today.

Exit codes, as the audit's: 0 no problem outside the baseline (or `--write-baseline`
wrote one), 1 problems it does not record, or with `--fail-on-stale` entries no problem
matches any more, 2 unusable input (a bad baseline, `--prune-baseline` without
`--baseline`, a config that could not be used: then no baseline is written).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nemo_rl_workers.checks.baseline_file import BaselineError
from nemo_rl_workers.checks.config.config_baseline import (
    Key,
    apply_config_baseline,
    read_config_baseline,
    write_config_baseline,
    write_config_keys,
)
from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.findings.exit_codes import EXIT_OK, EXIT_PROBLEMS, EXIT_UNUSABLE
from nemo_rl_workers.findings.reporter import Reporter


@dataclass
class CheckBaseline:
    """One run's baseline: what --baseline holds, and what this run did with it."""

    args: argparse.Namespace
    known: set[Key]
    written: int | None = None  # entries --write-baseline wrote
    stale: int = 0
    pruned: bool = False

    @classmethod
    def start(cls, args: argparse.Namespace, reporter: Reporter) -> CheckBaseline | None:
        """Read --baseline before any config is judged; None after one line on stderr."""
        say = reporter.of("check")
        if getattr(args, "prune_baseline", False) and not args.baseline:
            say.notice("--prune-baseline needs --baseline FILE, the baseline to prune")
            return None
        try:
            known = read_config_baseline(Path(args.baseline)) if args.baseline else set()
        except BaselineError as bad:
            say.notice(str(bad))
            return None
        return cls(args, known)

    def settle(self, reports: Sequence[ConfigReport], reporter: Reporter) -> bool:
        """Write, apply and prune, before the reports are rendered; False after one line
        on stderr when a baseline cannot be written."""
        args = self.args
        say = reporter.of("check")
        usable = all(r.unusable is None for r in reports)
        if args.write_baseline and usable:
            try:
                self.written = write_config_baseline(Path(args.write_baseline), reports)
            except OSError as bad:
                return _cannot_write(args.write_baseline, bad, say)
        if not args.baseline:
            return True
        outcome = apply_config_baseline(reports, self.known, Path(args.baseline))
        self.stale = len(outcome.stale)
        for rule, recipe, key in outcome.stale:
            say.notice(f"stale baseline entry: {rule} {recipe} {key}: no problem matches it "
                       "any more")
        if outcome.stale and getattr(args, "prune_baseline", False):
            kept = self.known - set(outcome.stale)
            try:
                write_config_keys(Path(args.baseline), kept)
            except OSError as bad:
                return _cannot_write(args.baseline, bad, say)
            self.pruned = True
            say.notice(f"removed {len(outcome.stale)} stale entries from {args.baseline}")
        if outcome.accepted:
            say.notice(f"{outcome.accepted} problem(s) accepted by the baseline {args.baseline}")
        return True

    def exit_code(self, code: int, reporter: Reporter) -> int:
        """The command's exit code, given the one its reports alone would have."""
        args = self.args
        say = reporter.of("check")
        if code == EXIT_UNUSABLE:
            if args.write_baseline and self.written is None:
                say.notice(f"{args.write_baseline} not written: a config could not be used")
            return code
        if self.written is not None:
            say.notice(f"wrote {self.written} baseline entries to {args.write_baseline}")
            return EXIT_OK
        if code == EXIT_OK and self.stale and getattr(args, "fail_on_stale", False) \
                and not self.pruned:
            return EXIT_PROBLEMS
        return code


def _cannot_write(path: str, bad: OSError, say: Reporter) -> bool:
    say.notice(f"cannot write {path}: {bad.strerror or bad}")
    return False
