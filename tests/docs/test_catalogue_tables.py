"""The guide's rule tables and the catalogue's data (`nemo_rl_workers.findings.catalogue`)
are the same rows: what `nemo-rl-workers explain` and SARIF's rule help say is what the
guide says. Each table of the data must appear in the guide exactly, under its heading;
and every rule table of the guide's catalogue is one of them."""

from __future__ import annotations

import re

import pytest

from nemo_rl_workers.findings.catalogue import TABLES, Table
from tests.docs.snippets import REPO

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"


def _section(text: str, title: str) -> str:
    """The text under the heading `title`, up to the next heading of any level."""
    match = re.search(rf"^#+ {re.escape(title)}\n", text, flags=re.MULTILINE)
    assert match is not None, f"the guide has no heading {title!r}"
    rest = text[match.end():]
    end = re.search(r"^#+ ", rest, flags=re.MULTILINE)
    return rest[: end.start()] if end else rest


def _guide_table(section: str, header: str) -> list[str]:
    """The table of `section` whose header line is `header`, line by line."""
    lines = section.splitlines()
    assert lines.count(header) == 1, f"{header!r} heads {lines.count(header)} tables here"
    start = lines.index(header)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.what)
def test_the_guide_shows_exactly_the_catalogues_rows(table: Table) -> None:
    shown = _guide_table(_section(GUIDE.read_text(encoding="utf-8"), table.title),
                         table.markdown()[0])
    expected = table.markdown()
    assert shown == expected, (
        f"the guide's {table.what} table and nemo_rl_workers/findings/catalogue_tables.py "
        "differ; the table the guide should hold:\n" + "\n".join(expected))


def test_every_rule_table_of_the_error_catalogue_is_in_the_data() -> None:
    catalogue = GUIDE.read_text(encoding="utf-8").split("## Error catalogue", 1)[1]
    headings = re.findall(r"^### (.+)$", catalogue, flags=re.MULTILINE)
    # Exceptions and worker call failures are no rules: they are classes and call outcomes.
    rule_tables = [h for h in headings if h not in ("Exceptions", "Worker call failures")]
    assert sorted(rule_tables) == sorted(
        t.title for t in TABLES if f"### {t.title}\n" in catalogue)



def test_anchors_are_the_guides_own() -> None:
    """The links SARIF writes land on the guide's headings (GitHub's anchors)."""
    assert {t.what: t.anchor for t in TABLES} == {
        "selection rule": "how-the-class-is-selected",
        "outdated-config rule": "how-the-class-is-selected",
        "problem rule": "problem-rules",
        "contract violation": "contract-violations",
        "static finding": "static-findings",
        "audit finding": "audit-findings",
        "guard refusal": "guarding-a-nemo-rl-run",
        "output-format rule": "output-formats",
        "config load error": "config-load-errors",
    }
    text = GUIDE.read_text(encoding="utf-8")
    assert "(#how-the-class-is-selected)" in text and "(#problem-rules)" in text
