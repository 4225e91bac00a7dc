"""`nemo-rl-workers explain [RULE]`: what a rule means, from the guide's catalogue.

Every entry the guide's rule tables hold for RULE (a selection rule R0-R8, a problem rule,
a contract violation, a static or audit finding, a guard refusal, an output-format rule, a
config load error), read from the same rows the guide shows: every rule name a command
prints has one (tests/cli collects them from the code). Without RULE, every name with its
one-line summary. Exit codes: 0, or 2 for a name no table holds (one line naming the
nearest ones).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from nemo_rl_workers.findings.catalogue import TABLES, Entry, entries, nearest, plain
from nemo_rl_workers.findings.exit_codes import EXIT_OK
from nemo_rl_workers.findings.reporter import Reporter
from nemo_rl_workers.model.suggest import did_you_mean


def _text(found: list[Entry]) -> list[str]:
    lines = [found[0].name]
    for entry in found:
        lines.append(f"  {entry.table.what} (guide: {entry.table.title})")
        for header, cell in entry.fields():
            items = plain(cell).splitlines()
            if len(items) == 1:
                lines.append(f"    {header}: {items[0]}")
            else:
                lines.append(f"    {header}:")
                lines.extend(f"      {item}" for item in items)
    return lines


def _json(found: list[Entry]) -> dict[str, object]:
    return {
        "rule": found[0].name,
        "entries": [
            {
                "table": entry.table.what,
                "guide_section": entry.table.title,
                "anchor": entry.table.anchor,
                "fields": {header: plain(cell) for header, cell in entry.fields()},
            }
            for entry in found
        ],
    }


def _index(as_json: bool, say: Reporter) -> int:
    if as_json:
        say.json({"tables": [
            {"table": t.what, "guide_section": t.title,
             "rules": {row[0]: Entry(row[0], t, tuple(row[1:])).summary for row in t.rows}}
            for t in TABLES]})
        return EXIT_OK
    for table in TABLES:
        say.line(f"{table.what}s (guide: {table.title})")
        for name, *cells in table.rows:
            say.line(f"  {name}: {Entry(name, table, tuple(cells)).summary}")
    return EXIT_OK


def run_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`explain [RULE] [--json]`."""
    rule: str | None = args.rule
    say = Reporter(out, err).of("explain")
    if rule is None:
        return _index(args.json, say)
    found = entries(rule)
    if not found:
        hint = did_you_mean(nearest(rule))
        return say.unusable(f"no rule is named {rule!r}; {hint} "
                            "(nemo-rl-workers explain lists every rule)")
    if args.json:
        say.json(_json(found))
    else:
        say.line("\n".join(_text(found)))
    return EXIT_OK
