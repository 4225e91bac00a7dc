"""`nemo-rl-workers explain [RULE]`: what a rule means, from the guide's catalogue.

Every entry the guide's rule tables hold for RULE (a selection rule R0-R8, a problem rule,
a contract violation, a static or audit finding, a guard refusal, an output-format rule, a
config load error), read from the same rows the guide shows: every rule name a command
prints has one (tests/cli collects them from the code). Without RULE, every name with its
one-line summary. Exit codes: 0, or 2 for a name no table holds (one line naming the
nearest ones).
"""

from __future__ import annotations

import json
from typing import TextIO

from nemo_rl_workers.errors import one_line
from nemo_rl_workers.findings.catalogue import TABLES, Entry, entries, nearest, plain
from nemo_rl_workers.model.suggest import did_you_mean

EXIT_OK, EXIT_UNUSABLE = 0, 2


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


def _index(as_json: bool, out: TextIO) -> int:
    if as_json:
        json.dump({"tables": [
            {"table": t.what, "guide_section": t.title,
             "rules": {row[0]: Entry(row[0], t, tuple(row[1:])).summary for row in t.rows}}
            for t in TABLES]}, out, indent=2)
        out.write("\n")
        return EXIT_OK
    for table in TABLES:
        print(f"{table.what}s (guide: {table.title})", file=out)
        for name, *cells in table.rows:
            print(f"  {name}: {Entry(name, table, tuple(cells)).summary}", file=out)
    return EXIT_OK


def run_explain(rule: str | None, as_json: bool, out: TextIO, err: TextIO) -> int:
    if rule is None:
        return _index(as_json, out)
    found = entries(rule)
    if not found:
        hint = did_you_mean(nearest(rule))
        print(f"nemo-rl-workers: explain: no rule is named {one_line(repr(rule))}; {hint} "
              "(nemo-rl-workers explain lists every rule)", file=err)
        return EXIT_UNUSABLE
    if as_json:
        json.dump(_json(found), out, indent=2)
        out.write("\n")
    else:
        print("\n".join(_text(found)), file=out)
    return EXIT_OK
