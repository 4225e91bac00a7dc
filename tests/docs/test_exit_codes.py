"""The exit codes the guide and `--help` document are `findings.exit_codes`' (issue 45):
each code defined once, and said the same way everywhere it is said."""

from __future__ import annotations

import io
import re

from nemo_rl_workers.commands.cli import main
from nemo_rl_workers.findings.exit_codes import MEANINGS, summary
from tests.docs.snippets import REPO

GUIDE = REPO / "docs" / "guides" / "worker-extensions.md"
TABLE_LEAD = "Exit codes, the same for"


def _guide_codes() -> list[int]:
    """The codes of the guide's exit-code table, in its order."""
    text = GUIDE.read_text(encoding="utf-8")
    table = text[text.index(TABLE_LEAD):].split("\n\n")[1]
    return [int(m.group(1)) for m in re.finditer(r"^\| `(\d+)` \|", table, re.MULTILINE)]


def test_the_guide_lists_every_exit_code_in_order() -> None:
    assert _guide_codes() == [code for code, _ in MEANINGS]


def test_help_lists_every_exit_code_with_its_meaning() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["--help"], out, err) == 0
    assert f"Exit codes: {summary()}." in " ".join(out.getvalue().split())
    for code, meaning in MEANINGS:
        assert f"{code} {meaning}" in summary()
