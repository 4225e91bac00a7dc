"""What `check` prints by default: one line per config, its problems and warnings under
it, what it left undecided counted by site once per run, and one summary line.

`-v` prints `report.render_text`'s full table per config instead; JSON, SARIF, JUnit and
the github annotations carry every note whatever is printed here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from nemo_rl_workers.checks.config.config_report import ConfigReport
from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.report import Style

# The sites the summary names, the most frequent first; the rest are counted.
SHOWN_SITES = 5
VERBOSE_HINT = "`check -v` lists them per config"

# Where a note was left undecided, from the head its producer writes
# (`tree_rules.TreeRule.line`, `revision_rules.scoped_findings`): the first that matches.
# A note of another shape is counted by its first two clauses (`policy: X was not
# verified`, `preflight.parallelism.fits: no world size given`).
_SITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"tree rule (?P<site>\S+ \([^)]*\))"), "{site}"),
    (re.compile(r"audit: [^:]+: (?P<site>\S+): \w+\[(?P<rule>[^\]]+)\]: not reached"),
     "{site} (audit {rule}: not reached by the config)"),
    (re.compile(r"audit: [^:]+: (?P<site>\S+): \w+\[(?P<rule>[^\]]+)\]"),
     "{site} (audit {rule}: not known to be reached)"),
)


def note_site(note: str) -> str:
    """The site a skipped note is counted under."""
    for pattern, shown in _SITES:
        found = pattern.match(note)
        if found is not None:
            return one_line(shown.format(**found.groupdict()))
    return one_line(": ".join(note.split(": ")[:2]))


def verdict_line(report: ConfigReport, style: Style) -> str:
    """`path: ok (policy Worker, generation Worker, world size 8)`: the config, its verdict,
    the class each section starts and the world size; a launch names its entry first."""
    head = one_line(report.config)
    if report.launch_script is not None:
        head = f"{one_line(report.launch_script)}: {head}"
    facts = [f"entry {one_line(report.entry_path)}"] if report.entry_path is not None else []
    facts.extend(f"{w.section} {w.fqn.rpartition('.')[2]}" for w in report.workers)
    if report.world_size is not None:
        facts.append(f"world size {report.world_size}")
    elif report.world_size_from is not None:
        facts.append("world size undecided")
    shown = f" ({', '.join(facts)})" if facts else ""
    return f"{style.bold(head)}: {_verdict(report, style)}{shown}"


def _verdict(report: ConfigReport, style: Style) -> str:
    if report.problems:
        count = len(report.problems)
        return style.red(f"{count} problem{'s' if count > 1 else ''}")
    if not report.judged:
        return style.yellow("undecided")
    if report.warnings:
        count = len(report.warnings)
        return style.yellow(f"ok, {count} warning{'s' if count > 1 else ''}")
    return style.green("ok")


def quiet_block(report: ConfigReport, style: Style) -> list[str]:
    """One config: its verdict line, then each problem and warning (located, as `-v` has
    them); a config not judged says why, since that is its verdict."""
    lines = [verdict_line(report, style)]
    lines.extend("  " + style.yellow(f"warning: {one_line(text)}") for text in report.warnings)
    lines.extend("  " + style.red(f"problem: {problem}") for problem in report.problems)
    if not report.judged:
        lines.extend(f"  skipped: {one_line(note)}" for note in report.skipped)
    return lines


def skipped_summary(reports: Sequence[ConfigReport]) -> list[str]:
    """The notes of every judged config, counted once per config by site: the most
    frequent `SHOWN_SITES` named, the rest counted, and how to list them all."""
    counts: Counter[str] = Counter()
    for report in reports:
        if report.judged:
            counts.update({note_site(note) for note in report.skipped})
    if not counts:
        return []
    configs = sum(1 for r in reports if r.judged and r.skipped)
    lines = [f"undecided or not run, not problems: {len(counts)} site"
             f"{'s' if len(counts) > 1 else ''} in {configs} config"
             f"{'s' if configs > 1 else ''} ({VERBOSE_HINT}):"]
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    width = len(str(ranked[0][1]))
    lines.extend(f"  {count:>{width}} config{'s' if count > 1 else ' '}  {site}"
                 for site, count in ranked[:SHOWN_SITES])
    if len(ranked) > SHOWN_SITES:
        rest = len(ranked) - SHOWN_SITES
        lines.append(f"  and {rest} more site{'s' if rest > 1 else ''}")
    return lines


def summary_line(reports: Sequence[ConfigReport]) -> str:
    """`295 configs checked: 286 ok, 5 with problems, 4 with warnings, 41 sites undecided`."""
    usable = [r for r in reports if r.unusable is None]
    sites = {note_site(note) for r in usable if r.judged for note in r.skipped}
    # Each config counted once: its problems first, then its warnings.
    parts = [
        f"{sum(1 for r in usable if r.judged and not r.problems and not r.warnings)} ok",
        f"{sum(1 for r in usable if r.problems)} with problems",
        f"{sum(1 for r in usable if r.warnings and not r.problems)} with warnings",
    ]
    unjudged = sum(1 for r in usable if not r.judged and not r.problems and not r.warnings)
    if unjudged:
        parts.append(f"{unjudged} undecided")
    unusable = len(reports) - len(usable)
    if unusable:
        parts.append(f"{unusable} unusable")
    parts.append(f"{len(sites)} site{'' if len(sites) == 1 else 's'} undecided")
    count = len(reports)
    return f"{count} config{'' if count == 1 else 's'} checked: {', '.join(parts)}"
