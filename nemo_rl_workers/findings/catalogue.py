"""What each rule means: the guide's rule tables, for `explain` and SARIF's rule help.

The rows are data (`catalogue_tables`), the same rows the guide's tables show (tests/docs
checks they agree). A rule name may have an entry in more than one table (`R5` is a
selection rule and a problem rule; `base` a contract violation and a static finding):
`entries` gives each. `help_for` is what SARIF carries for a rule: a short description and
the full help as text and markdown, and a link into the guide only where the guide's
address is known (configured, or in the installed distribution's metadata); there is no
placeholder address.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from nemo_rl_workers.findings import catalogue_tables as rows
from nemo_rl_workers.model.suggest import closest

# Where the guide is published, for SARIF's help links; unset, the installed
# distribution's `Project-URL` labelled one of GUIDE_URL_LABELS is used, else no link.
GUIDE_URL_ENV = "NEMO_RL_WORKERS_GUIDE_URL"
DISTRIBUTION = "nemo-rl-worker-contracts"
GUIDE_URL_LABELS = ("guide", "documentation", "docs")
CATALOGUE_ANCHOR = "error-catalogue"


@dataclass(frozen=True)
class Table:
    """One of the guide's rule tables: its heading, its columns, its rows."""

    title: str
    """The guide's heading over the table (its anchor is made from it)."""
    what: str
    """How one entry is called: "problem rule", "contract violation", ..."""
    headers: tuple[str, ...]
    """The column headings; the first names the rule column."""
    rows: rows.Rows
    code_names: bool = True
    """Whether the guide shows each name as `code`."""

    @property
    def anchor(self) -> str:
        """The guide's anchor of the heading (GitHub's rule: lower case, spaces to dashes)."""
        return re.sub(r"[^a-z0-9 -]", "", self.title.lower()).replace(" ", "-")

    def markdown(self) -> list[str]:
        """The table as the guide writes it, one line per row."""
        lines = ["| " + " | ".join(self.headers) + " |",
                 "| " + " | ".join("---" for _ in self.headers) + " |"]
        for name, *cells in self.rows:
            shown = f"`{name}`" if self.code_names else name
            lines.append("| " + " | ".join([shown, *cells]) + " |")
        return lines


@dataclass(frozen=True)
class Entry:
    """One row of one table: a rule name and what its table says about it."""

    name: str
    table: Table
    cells: tuple[str, ...]
    """The row's cells after the name, as the guide's markdown."""

    def fields(self) -> list[tuple[str, str]]:
        """(column heading, cell as markdown), after the name."""
        return list(zip(self.table.headers[1:], self.cells, strict=True))

    @property
    def summary(self) -> str:
        """The first cell, as plain text: what the rule is about, in one line."""
        return " ".join(plain(self.cells[0]).split())


TABLES: tuple[Table, ...] = (
    Table("How the class is selected", "selection rule",
          ("rule", "when", "outcome", "exact warning or error text"), rows.SELECTION,
          code_names=False),
    Table("How the class is selected", "outdated-config rule",
          ("rule", "when", "exact error text"), rows.OUTDATED),
    Table("Problem rules", "problem rule", ("rule", "raised when", "fix"), rows.PROBLEMS),
    Table("Contract violations", "contract violation", ("kind", "meaning"), rows.CONTRACT),
    Table("Static findings", "static finding", ("kind", "meaning"), rows.STATIC),
    Table("Audit findings", "audit finding", ("rule", "meaning"), rows.AUDIT),
    Table("Guarding a NeMo-RL run", "guard refusal", ("rule", "refused when"), rows.GUARD),
    Table("Output formats", "output-format rule", ("rule", "meaning"), rows.FORMATS),
    Table("Config load errors", "config load error", ("kind", "meaning"), rows.LOAD),
)
"""In the guide's order."""

# For a finding's rule, the entry that describes findings first.
_FINDING_ORDER = ("problem rule", "contract violation", "static finding", "audit finding",
                  "guard refusal", "output-format rule", "config load error", "selection rule",
                  "outdated-config rule")


def entries(name: str) -> list[Entry]:
    """Every entry of `name`, in the guide's order; [] for a name no table has."""
    return [Entry(name, table, tuple(cells))
            for table in TABLES for row_name, *cells in table.rows if row_name == name]


def names() -> list[str]:
    """Every rule name the tables hold, once each, in the guide's order."""
    return list(dict.fromkeys(row[0] for table in TABLES for row in table.rows))


def nearest(name: str) -> list[str]:
    """The known names nearest to `name` (never none): typos first, then by likeness."""
    folded = {n.lower(): n for n in names()}
    same = [folded[name.lower()]] if name.lower() in folded else []  # only the case differs
    return same + [folded[n] for n in closest(name.lower(), folded, cutoff=0.0)][:3 - len(same)]


_CODE = re.compile(r"`([^`]*)`")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])")


def plain(markdown: str) -> str:
    """A cell as plain text: code spans, links and emphasis unwrapped, `<br>` a new line."""
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:
        spans.append(match.group(1))
        return f"\x00{len(spans) - 1}\x00"

    text = _CODE.sub(keep, markdown)
    text = _LINK.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    text = text.replace("<br>", "\n").replace("\\|", "|")
    return re.sub("\x00(\\d+)\x00", lambda m: spans[int(m.group(1))], text)


def guide_url() -> str | None:
    """Where the guide is published: configured, else the distribution's metadata, else
    None (then nothing links to it)."""
    configured = os.environ.get(GUIDE_URL_ENV, "").strip()
    if configured:
        return configured
    from importlib import metadata

    try:
        project_urls = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in project_urls:
        label, _, url = str(entry).partition(",")
        if label.strip().lower() in GUIDE_URL_LABELS and url.strip().startswith(
                ("https://", "http://")):
            return url.strip()
    return None


@dataclass(frozen=True)
class RuleHelp:
    """What SARIF carries for one rule."""

    short: str
    text: str
    markdown: str
    uri: str | None


def help_for(rule: str) -> RuleHelp:
    """The short description, the full help (text and markdown) and, where the guide's
    address is known, the link to the table that lists `rule`."""
    found = sorted(entries(rule), key=lambda e: _FINDING_ORDER.index(e.table.what))
    url = guide_url()
    if not found:
        text = f"Rule {rule}; see the guide's error catalogue."
        return RuleHelp(text, text, text, f"{url}#{CATALOGUE_ANCHOR}" if url else None)
    texts, marks = [], []
    for entry in found:
        texts.append(f"{entry.name}: {entry.table.what} ({entry.table.title})")
        marks.append(f"**`{entry.name}`: {entry.table.what}** ({entry.table.title})\n")
        for header, cell in entry.fields():
            texts.append(f"  {header}: " + "\n    ".join(plain(cell).splitlines()))
            items = cell.split("<br>")
            marks.append(f"- {header}: {items[0]}" if len(items) == 1 else
                         f"- {header}:\n" + "\n".join(f"  - {item}" for item in items))
        marks.append("")
    return RuleHelp(found[0].summary, "\n".join(texts), "\n".join(marks).strip() + "\n",
                    f"{url}#{found[0].table.anchor}" if url else None)
